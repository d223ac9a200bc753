import express, { type ErrorRequestHandler, type RequestHandler, type Response, type Router } from 'express';
import { formatErrors, type Contracts } from '@chainpipe/contracts';
import { sendError, sendOk } from '@chainpipe/http';
import {
  addressQuoteItem,
  fiatRateItems,
  latestQuoteItem,
  normalizeChainType,
  parseTokenIds,
  usdFactor,
  type CryptoQuoteMessage,
  type FiatRow,
  type QuoteStore,
} from '@chainpipe/price';
import { PriceCode, sendPriceError } from './envelope';
import type { ReferenceSnapshot } from './reference-snapshot';

export interface QuotesRouteDeps {
  snapshot: ReferenceSnapshot;
  store: Pick<QuoteStore, 'readQuotes' | 'readFiatRates'>;
  contracts: Contracts;
  now: () => number;
  /** A quote whose source timestamp is older than this is not served. */
  quoteMaxAgeMs: number;
  bodyLimitBytes: number;
}

/** At most this many token ids per quotes/latest request and entries per batch. */
export const MAX_QUOTE_IDS = 1000;
const CACHE_CONTROL = 'public, max-age=3, s-maxage=3';

const one = (v: unknown): unknown => (Array.isArray(v) ? v[0] : v);

/**
 * Latest quotes (by token id, strings), quotes by contract address (numbers), fiat rates. Reads
 * Redis only (plus the in-memory reference): the hot path of the service.
 */
export function quotesRoutes(deps: QuotesRouteDeps): Router {
  const router = express.Router();
  const validateBatch = deps.contracts.validator('http/price/quotes-batch');
  const fresh = (q: CryptoQuoteMessage | undefined): q is CryptoQuoteMessage => q !== undefined && deps.now() - q.as_of <= deps.quoteMaxAgeMs;

  /** The fiat a request names with its factor from USD; sends the error and returns undefined otherwise. */
  const resolveFiat = async (res: Response, raw: unknown): Promise<{ fiat: FiatRow; factor: number } | undefined> => {
    const code = typeof raw === 'string' && raw.trim() ? raw.trim().toUpperCase() : 'USD';
    const fiat = await deps.snapshot.fiat(code);
    if (!fiat) {
      sendPriceError(res, 400, PriceCode.missingParameter, `fiat ${code.slice(0, 10)} is not supported`);
      return undefined;
    }
    const factor = usdFactor(code, code === 'USD' ? undefined : await deps.store.readFiatRates('USD'));
    if (factor === undefined) {
      sendError(res, 503, `no exchange rate for ${code} yet`);
      return undefined;
    }
    return { fiat, factor };
  };

  router.get('/quotes/latest', async (req, res) => {
    const parsed = parseTokenIds(one(req.query.ids), MAX_QUOTE_IDS);
    if (!parsed.ok) return sendPriceError(res, 400, PriceCode.missingParameter, parsed.error);
    const target = await resolveFiat(res, one(req.query.fiat));
    if (!target) return;
    const tokens = (await deps.snapshot.tokensByIds(parsed.ids)).filter((t) => t?.external_id);
    const quotes = await deps.store.readQuotes(tokens.map((t) => t!.external_id!));
    const items = [];
    for (let i = 0; i < tokens.length; i++) {
      const q = quotes[i];
      if (fresh(q)) items.push(latestQuoteItem(tokens[i]!, target.fiat, q.usd, target.factor));
    }
    res.setHeader('Cache-Control', CACHE_CONTROL);
    sendOk(res, { items });
  });

  // Body parsing here, not app-wide: a malformed body of this route is the spec's 20003.
  const json = express.json({ limit: deps.bodyLimitBytes, strict: false, type: () => true });
  const badJson: ErrorRequestHandler = (err, _req, res, next) => {
    if ((err as { type?: string }).type === 'entity.parse.failed') return sendPriceError(res, 400, PriceCode.badBatchBody, 'invalid JSON body');
    next(err);
  };

  interface BatchBody {
    token_addrs: { chain_type: string; chain_id?: number | string | null; token_address: string }[];
    fiat?: string | null;
  }
  const batch: RequestHandler = async (req, res) => {
    const body = req.body as BatchBody;
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
  router.post('/quotes/batch', json, badJson, batch);

  router.get('/fiats/rates/:base', async (req, res) => {
    const base = String(req.params.base).trim().toUpperCase();
    const [rates, fiats] = await Promise.all([deps.store.readFiatRates('USD'), deps.snapshot.fiats()]);
    const items = fiatRateItems(base, rates, fiats);
    sendOk(res, { total: items.length, items });
  });

  return router;
}
