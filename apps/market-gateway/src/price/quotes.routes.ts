import type { RequestHandler, Response } from 'express';
import { normalizeChainType } from '@chainpipe/chains';
import { formatErrors, type Contracts } from '@chainpipe/contracts';
import { sendError, sendOk, type ApiRoutes } from '@chainpipe/http';
import type { Clock } from '@chainpipe/runtime';
import { addressQuoteItem, fiatRateItems, freshOrNone, latestQuoteItem, parseTokenIds, usdFactor, type CryptoQuoteMessage, type FiatRow, type FreshnessLimits } from '@chainpipe/price';
import { type QuoteStore, type ReferenceSnapshot } from '@chainpipe/price-store';
import { EXAMPLE_ADDRESS_QUOTE, EXAMPLE_LATEST_QUOTE } from './api-examples';
import { PRICE_AUTH, PRICE_PREFIX, PriceCode, sendPriceError } from './envelope';

export interface QuotesRouteDeps {
  snapshot: ReferenceSnapshot;
  store: Pick<QuoteStore, 'readQuotes' | 'readFiatRates'>;
  contracts: Contracts;
  clock: Pick<Clock, 'now'>;
  /** How old quotes and fiat rates may be to be served (freshOrNone: one rule for both). */
  freshness: FreshnessLimits;
}

/** At most this many token ids per quotes/latest request and entries per batch. */
export const MAX_QUOTE_IDS = 1000;
const CACHE_CONTROL = 'public, max-age=3, s-maxage=3';

const one = (v: unknown): unknown => (Array.isArray(v) ? v[0] : v);
const TAGS = ['quotes'];

/**
 * Latest quotes (by token id, strings), quotes by contract address (numbers), fiat rates. Reads
 * Redis only (plus the in-memory reference): the hot path of the service.
 */
export function quotesRoutes(api: ApiRoutes, deps: QuotesRouteDeps): void {
  const validateBatch = deps.contracts.validator('http/price/quotes-batch');
  const fresh = (q: CryptoQuoteMessage | undefined): q is CryptoQuoteMessage => freshOrNone(q, deps.clock.now(), deps.freshness.quoteMaxAgeMs) !== undefined;
  /** The USD fiat rates, if fresh; and whether stale ones are held (to say so). */
  const usdRates = async () => {
    const stored = await deps.store.readFiatRates('USD');
    return { rates: freshOrNone(stored, deps.clock.now(), deps.freshness.fiatRatesMaxAgeMs), stale: stored !== undefined };
  };

  /** The fiat a request names with its factor from USD; sends the error and returns undefined otherwise. */
  const resolveFiat = async (res: Response, raw: unknown): Promise<{ fiat: FiatRow; factor: number } | undefined> => {
    const code = typeof raw === 'string' && raw.trim() ? raw.trim().toUpperCase() : 'USD';
    const fiat = await deps.snapshot.fiat(code);
    if (!fiat) {
      sendPriceError(res, 400, PriceCode.missingParameter, `fiat ${code.slice(0, 10)} is not supported`);
      return undefined;
    }
    const rates = code === 'USD' ? undefined : await usdRates();
    const factor = usdFactor(code, rates?.rates);
    if (factor === undefined) {
      sendError(res, 503, rates?.stale && !rates.rates ? `no fresh exchange rate for ${code}: the rates are older than ${deps.freshness.fiatRatesMaxAgeMs} ms` : `no exchange rate for ${code} yet`);
      return undefined;
    }
    return { fiat, factor };
  };

  api.route(
    {
      method: 'get',
      path: `${PRICE_PREFIX}/quotes/latest`,
      summary: 'Latest quotes by token id',
      description: `Fresh quotes of the known tokens asked for, in the target fiat, each with its source time (\`last_updated\`); unknown ids and tokens without a quote newer than \`QUOTE_MAX_AGE_MS\` are left out, and a fiat other than USD needs rates newer than \`FIAT_RATES_MAX_AGE_MS\` (else 503). At most ${MAX_QUOTE_IDS} ids. Answers carry \`Cache-Control: ${CACHE_CONTROL}\`. Missing \`ids\`: 400, \`code\` 20001, \`ids is required\`.`,
      tags: TAGS,
      auth: PRICE_AUTH,
      request: { query: 'http/price/quotes-latest-query', checkedByHandler: true },
      ok: { data: 'http/price/latest-quotes', description: '`{ items }` of latest quote items (numeric fields as strings)', example: { items: [EXAMPLE_LATEST_QUOTE] } },
      errors: { 400: 'code 20001: `ids is required`, bad ids, or an unsupported fiat', 503: 'no exchange rate for the fiat yet' },
    },
    async (req, res) => {
    // Express 5 parses the query string on every read of req.query: once here.
    const query = req.query;
    const parsed = parseTokenIds(one(query.ids), MAX_QUOTE_IDS);
    if (!parsed.ok) return sendPriceError(res, 400, PriceCode.missingParameter, parsed.error);
    const target = await resolveFiat(res, one(query.fiat));
    if (!target) return;
    const tokens = (await deps.snapshot.tokensByIds(parsed.ids)).filter((t) => t?.external_id);
    const quotes = await deps.store.readQuotes(tokens.map((t) => t!.external_id!));
    const items = [];
    for (let i = 0; i < tokens.length; i++) {
      const q = quotes[i];
      if (fresh(q)) items.push(latestQuoteItem(tokens[i]!, target.fiat, q.usd, target.factor, q.as_of));
    }
    res.setHeader('Cache-Control', CACHE_CONTROL);
    sendOk(res, { items });
  });

  const batch: RequestHandler = async (req, res) => {
    // Checked here rather than by the route: the spec gives a bad list its own code (20003).
    const body: unknown = req.body;
    if (!validateBatch(body)) {
      const errors = validateBatch.errors ?? [];
      const aboutList = errors.some((e) => (e.instancePath === '' && (e.keyword === 'type' || e.params?.missingProperty === 'token_addrs')) || (e.instancePath === '/token_addrs' && e.keyword !== 'maxItems'));
      if (aboutList) return sendPriceError(res, 400, PriceCode.badBatchBody, 'token_addrs is required');
      return sendPriceError(res, 400, PriceCode.missingParameter, formatErrors(errors));
    }
    const entries: { chainType: string; chainId: number | null; address: string }[] = [];
    for (const [i, e] of body.token_addrs.entries()) {
      const chainType = normalizeChainType(e.chain_type);
      if (!chainType) return sendPriceError(res, 400, PriceCode.missingParameter, `token_addrs[${i}].chain_type ${JSON.stringify(e.chain_type.slice(0, 50))} is not supported`);
      const chainId = e.chain_id === null || e.chain_id === undefined || e.chain_id === '' ? null : Number(e.chain_id);
      if (chainType === 'evm' && chainId === null) return sendPriceError(res, 400, PriceCode.missingParameter, `token_addrs[${i}].chain_id is required for evm chains`);
      entries.push({ chainType, chainId, address: e.token_address.trim() });
    }
    const target = await resolveFiat(res, body.fiat);
    if (!target) return;
    const tokens = await deps.snapshot.tokensByAddress(entries);
    const seen = new Set<number>();
    const wanted: { token: NonNullable<(typeof tokens)[number]>; address: string }[] = [];
    tokens.forEach((t, i) => {
      if (!t?.external_id || seen.has(t.id)) return;
      seen.add(t.id);
      wanted.push({ token: t, address: t.contract_address ?? entries[i].address });
    });
    const quotes = await deps.store.readQuotes(wanted.map((w) => w.token.external_id!));
    const items = [];
    for (let i = 0; i < wanted.length; i++) {
      const q = quotes[i];
      if (fresh(q)) items.push(addressQuoteItem(wanted[i].token, wanted[i].address, q, target.factor));
    }
    sendOk(res, { items });
  };
  api.route(
    {
      method: 'post',
      path: `${PRICE_PREFIX}/quotes/batch`,
      summary: 'Quotes by chain and contract address',
      description: 'Empty or missing `token_addrs`, or a body that is not JSON: 400, `code` 20003 (`token_addrs is required`, `invalid JSON body`). A bad entry: 400, `code` 20001.',
      tags: TAGS,
      auth: PRICE_AUTH,
      request: {
        body: 'http/price/quotes-batch',
        bodyExample: { token_addrs: [{ chain_type: 'ethereum', chain_id: 1, token_address: EXAMPLE_ADDRESS_QUOTE.address }], fiat: 'USD' },
        checkedByHandler: true,
      },
      ok: { data: 'http/price/address-quotes', description: '`{ items }` of address quote items (numeric fields as numbers)', example: { items: [EXAMPLE_ADDRESS_QUOTE] } },
      errors: { 400: 'code 20003 (`token_addrs is required`, `invalid JSON body`) or 20001 (a bad entry or fiat)', 503: 'no exchange rate for the fiat yet' },
    },
    batch,
  );

  api.route(
    {
      method: 'get',
      path: `${PRICE_PREFIX}/fiats/rates/:base`,
      summary: 'Exchange rates of a base fiat',
      description: 'A base without rate data answers `{ total: 0, items: [] }`; so do rates older than `FIAT_RATES_MAX_AGE_MS` (their source time, `last_updated` on each item).',
      tags: ['reference data'],
      auth: PRICE_AUTH,
      // A code no fiat has (a NUL) is a base without rate data.
      request: { path: 'http/price/fiat-base-path', lookup: { params: ['base'], notFound: (_req, res) => sendOk(res, { total: 0, items: [] }) } },
      ok: {
        data: 'http/price/fiat-rates',
        description: '`{ total, items }` of fiat rate items (8 decimal places)',
        example: { total: 1, items: [{ target_fiat_id: 2, target_fiat_code: 'EUR', rate: '0.92110000', last_updated: '2026-11-24T12:00:00.000Z' }] },
      },
    },
    async (req, res) => {
    const base = String(req.params.base).trim().toUpperCase();
    const [rates, fiats] = await Promise.all([usdRates(), deps.snapshot.fiats()]);
    // Stale rates are no rate data: the spec's empty answer.
    const items = fiatRateItems(base, rates.rates, fiats);
    sendOk(res, { total: items.length, items });
  });
}
