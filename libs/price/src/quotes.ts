/**
 * Quotes as they travel on `price.quotes.v1` (schemas/kafka/price.quotes.v1.json) and as the
 * price API answers them. Pure: parsing of the upstream payloads, conversion, item building.
 */

import type { KafkaPriceQuotesV1 } from '@chainpipe/contracts';

// The message types are the ones generated from the topic's schema; only their parts are named here.
export type PriceQuoteMessage = KafkaPriceQuotesV1;
export type CryptoQuoteMessage = Extract<KafkaPriceQuotesV1, { kind: 'crypto' }>;
/** Units of CODE per 1 base in `rates`. */
export type FiatRatesMessage = Extract<KafkaPriceQuotesV1, { kind: 'fiat' }>;
export type UsdQuote = CryptoQuoteMessage['usd'];

/** The asset of a quote: the topic's key (TOPICS.priceQuotes.key), defined with the topics. */
export { quoteKey } from '@chainpipe/contracts';

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

export interface ParseResult<T> {
  items: T[];
  /** What was skipped and why (logged and counted by the ingester). */
  rejected: { id: string; reason: string }[];
}

/**
 * CoinMarketCap `quotes/latest` (v2, by id): `data` maps an id to an asset object (or, for some
 * queries, to a list of them) with `quote.USD`. An asset without a finite USD price or a
 * readable `last_updated` is rejected, never published with made-up values.
 */
export function parseCmcQuotes(body: unknown, fetchedAt: number, source = 'coinmarketcap'): ParseResult<CryptoQuoteMessage> {
  const out: ParseResult<CryptoQuoteMessage> = { items: [], rejected: [] };
  const data = (body as { data?: unknown })?.data;
  if (!data || typeof data !== 'object') return { items: [], rejected: [{ id: '*', reason: 'no data object' }] };
  for (const [id, entry] of Object.entries(data as Record<string, unknown>)) {
    const assets = Array.isArray(entry) ? entry : [entry];
    for (const asset of assets as Record<string, any>[]) {
      const usd = asset?.quote?.USD;
      const price = num(usd?.price);
      const stamp = Date.parse(String(usd?.last_updated ?? asset?.last_updated ?? ''));
      if (price === null || price < 0) {
        out.rejected.push({ id, reason: 'no USD price' });
        continue;
      }
      if (!Number.isFinite(stamp)) {
        out.rejected.push({ id, reason: 'no last_updated' });
        continue;
      }
      out.items.push({
        kind: 'crypto',
        source,
        external_id: String(asset.id ?? id),
        symbol: String(asset.symbol ?? '').slice(0, 64),
        name: String(asset.name ?? '').slice(0, 200),
        as_of: stamp,
        fetched_at: fetchedAt,
        usd: {
          price,
          market_cap: num(usd.market_cap),
          volume_24h: num(usd.volume_24h),
          volume_change_24h: num(usd.volume_change_24h),
          percent_change_1h: num(usd.percent_change_1h),
          percent_change_24h: num(usd.percent_change_24h),
          percent_change_7d: num(usd.percent_change_7d),
          percent_change_30d: num(usd.percent_change_30d),
          fully_diluted_valuation: num(usd.fully_diluted_market_cap),
          circulating_supply: num(asset.circulating_supply),
          total_supply: num(asset.total_supply),
          max_supply: num(asset.max_supply),
        },
      });
    }
  }
  return out;
}

/** Open Exchange Rates `latest.json`: `{timestamp (Unix s), base, rates}`; positive finite rates only. */
export function parseFiatRates(body: unknown, fetchedAt: number, source = 'openexchangerates'): FiatRatesMessage | { error: string } {
  const b = body as { timestamp?: unknown; base?: unknown; rates?: unknown };
  if (typeof b?.base !== 'string' || !/^[A-Z]{3,10}$/.test(b.base)) return { error: 'no base' };
  if (typeof b.timestamp !== 'number' || !Number.isFinite(b.timestamp)) return { error: 'no timestamp' };
  if (!b.rates || typeof b.rates !== 'object') return { error: 'no rates' };
  const rates: Record<string, number> = {};
  for (const [code, rate] of Object.entries(b.rates as Record<string, unknown>)) {
    if (/^[A-Z]{3,10}$/.test(code) && typeof rate === 'number' && Number.isFinite(rate) && rate > 0) rates[code] = rate;
  }
  return { kind: 'fiat', source, base: b.base, as_of: Math.round(b.timestamp * 1000), fetched_at: fetchedAt, rates };
}
