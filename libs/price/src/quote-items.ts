import type { HttpPriceAddressQuotes, HttpPriceFiatRates, HttpPriceLatestQuotes } from '@chainpipe/contracts';
import { decimalString, rateString, roundNumber } from './decimal';
import type { FiatRow, TokenRow } from './reference';
import type { CryptoQuoteMessage, FiatRatesMessage, UsdQuote } from './quotes';

/**
 * The quote items of the price API (spec, "Latest quote item", "Address quote item", "Fiat rate
 * item"). Quotes are held in USD; another fiat is reached through the USD fiat rates (units of
 * the fiat per 1 USD). Amounts of money convert; percentages and supplies do not.
 */

/** A latest quote item: the schema's (`http/price/latest-quotes`). */
export type LatestQuoteItem = HttpPriceLatestQuotes['items'][number];

/** Units of `code` per 1 USD, from the USD rates; 1 for USD itself; undefined when unknown. */
export function usdFactor(code: string, usdRates: FiatRatesMessage | undefined): number | undefined {
  if (code === 'USD') return 1;
  const r = usdRates?.base === 'USD' ? usdRates.rates[code] : undefined;
  return typeof r === 'number' && r > 0 ? r : undefined;
}

const money = (v: number | null | undefined, factor: number) => (v === null || v === undefined ? null : v * factor);
/** Unknown values of the string fields are empty strings: the field stays a string. */
const str = (v: number | null | undefined): string => decimalString(v) ?? '';

/** `asOf`: the quote's source time (Unix ms), served as `last_updated` beside the spec's fields. */
export function latestQuoteItem(token: Pick<TokenRow, 'id' | 'name' | 'symbol'>, fiat: Pick<FiatRow, 'id' | 'code'>, quote: UsdQuote, factor: number, asOf: number): LatestQuoteItem {
  return {
    token_id: token.id,
    name: token.name,
    symbol: token.symbol,
    fiat_id: fiat.id,
    fiat_code: fiat.code,
    price: str(money(quote.price, factor)),
    market_cap: str(money(quote.market_cap, factor)),
    volume_24h: str(money(quote.volume_24h, factor)),
    volume_change_24h: str(quote.volume_change_24h),
    percent_change_1h: str(quote.percent_change_1h),
    percent_change_24h: str(quote.percent_change_24h),
    percent_change_7d: str(quote.percent_change_7d),
    percent_change_30d: str(quote.percent_change_30d),
    fully_diluted_valuation: str(money(quote.fully_diluted_valuation, factor)),
    circulating_supply: str(quote.circulating_supply),
    total_supply: str(quote.total_supply),
    max_supply: str(quote.max_supply),
    last_updated: new Date(asOf).toISOString(),
  };
}

/** An address quote item: the schema's (`http/price/address-quotes`). */
export type AddressQuoteItem = HttpPriceAddressQuotes['items'][number];

/** `*_usd` fields stay in USD; `market_cap`, `fully_diluted_valuation` and `total_volume` are in the requested fiat. */
export function addressQuoteItem(token: TokenRow, address: string, quote: CryptoQuoteMessage, factor: number): AddressQuoteItem {
  const q = quote.usd;
  return {
    token_id: token.id,
    name: token.name,
    symbol: token.symbol,
    chain_type: token.chain_type,
    chain_id: token.protocol_chain_id === null ? null : Number(token.protocol_chain_id),
    address,
    external_id: quote.external_id,
    price_usd: roundNumber(q.price),
    market_cap_usd: roundNumber(q.market_cap),
    volume_24h_usd: roundNumber(q.volume_24h),
    percent_change_1h: roundNumber(q.percent_change_1h),
    percent_change_24h: roundNumber(q.percent_change_24h),
    percent_change_7d: roundNumber(q.percent_change_7d),
    percent_change_30d: roundNumber(q.percent_change_30d),
    last_updated: new Date(quote.as_of).toISOString(),
    market_cap: roundNumber(money(q.market_cap, factor)),
    fully_diluted_valuation: roundNumber(money(q.fully_diluted_valuation, factor)),
    total_volume: roundNumber(money(q.volume_24h, factor)),
    circulating_supply: roundNumber(q.circulating_supply),
    total_supply: roundNumber(q.total_supply),
    max_supply: roundNumber(q.max_supply),
  };
}

/** A fiat rate item: the schema's (`http/price/fiat-rates`). */
export type FiatRateItem = HttpPriceFiatRates['items'][number];

/**
 * Rates from `base` to every other known fiat, crossed through the USD rates
 * (rate = usd[target] / usd[base]); empty when the base has no rate. Each item carries the rates'
 * source time as `last_updated` beside the spec's fields.
 */
export function fiatRateItems(base: string, usdRates: FiatRatesMessage | undefined, fiats: readonly Pick<FiatRow, 'id' | 'code'>[]): FiatRateItem[] {
  const baseFactor = usdFactor(base, usdRates);
  if (baseFactor === undefined || !usdRates) return [];
  const lastUpdated = new Date(usdRates.as_of).toISOString();
  const items: FiatRateItem[] = [];
  for (const f of fiats) {
    if (f.code === base) continue;
    const target = usdFactor(f.code, usdRates);
    if (target === undefined) continue;
    items.push({ target_fiat_id: f.id, target_fiat_code: f.code, rate: rateString(target / baseFactor), last_updated: lastUpdated });
  }
  return items;
}

/** `ids` of quotes/latest: comma-separated token ids, deduplicated in order. */
export function parseTokenIds(raw: unknown, max: number): { ok: true; ids: number[] } | { ok: false; error: string } {
  if (typeof raw !== 'string') return { ok: false, error: 'ids is required' };
  const parts = raw.split(',').map((s) => s.trim()).filter(Boolean);
  if (!parts.length) return { ok: false, error: 'ids is required' };
  if (parts.some((p) => !/^\d{1,9}$/.test(p))) return { ok: false, error: 'ids must be comma-separated integer token ids' };
  const ids = [...new Set(parts.map(Number))];
  if (ids.length > max) return { ok: false, error: `ids may list at most ${max} tokens` };
  return { ok: true, ids };
}
