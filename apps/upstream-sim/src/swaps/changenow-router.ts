import { randomBytes } from 'node:crypto';
import express, { type Router } from 'express';
import { bech32 } from '@scure/base';
import { base58Encode, tronHexToBase58 } from '@chainpipe/chains';
import type { QuotesSource } from '../market/quotes-source';

/**
 * A ChangeNOW API v2 stand-in (https://documenter.getpostman.com/view/8180765/SVfTPnM8):
 * `GET /changenow/v2/exchange/estimated-amount`, `POST /changenow/v2/exchange`,
 * `GET /changenow/v2/exchange/by-id`, `GET /changenow/v2/exchange/range`, key in
 * `x-changenow-api-key`, errors as `{error, message}`. The range of every pair starts at the
 * amount worth 15 USD of the source currency (`minAmount`, whole units, `maxAmount` null); an
 * estimate or exchange below it is refused as ChangeNOW does, HTTP 400 `deposit_too_small`. Estimates follow the simulator's quotes (the CoinMarketCap stand-in's
 * random walks) less a 0.5 % provider fee; every exchange gets a fresh deposit (payin) address of
 * its network and waits. Controls: `PUT /sim/changenow/exchanges/{id}` `{status, payoutHash?,
 * refundHash?, amountTo?}` moves an exchange (the provider's own progress, which no test can
 * cause through a chain here); `GET /sim/changenow/exchanges` lists them; `PUT
 * /sim/changenow/delay` `{ms}` holds every estimate that long (a slow provider), and
 * `GET /sim/changenow/stats` counts estimates and those whose caller hung up before the answer.
 */
const PROVIDER_FEE = 0.005;
const MIN_EXCHANGE_USD = 15;

/** Tickers of the seed's assets → CoinMarketCap ids of the quotes stand-in. */
const CMC_IDS: Readonly<Record<string, string>> = {
  btc: '1', eth: '1027', usdt: '825', usdc: '3408', bnb: '1839', sol: '5426', trx: '1958', pol: '28321', matic: '28321', avax: '5805', atom: '3794', sui: '20947', apt: '21794',
  dai: '4943', wbtc: '3717', weth: '2396', link: '1975', uni: '7083',
};

const STATUSES = ['new', 'waiting', 'confirming', 'exchanging', 'sending', 'finished', 'failed', 'refunded', 'verifying'] as const;

interface Exchange {
  id: string;
  status: (typeof STATUSES)[number];
  fromCurrency: string;
  fromNetwork: string;
  toCurrency: string;
  toNetwork: string;
  expectedAmountFrom: number;
  expectedAmountTo: number;
  amountFrom: number | null;
  amountTo: number | null;
  payinAddress: string;
  payoutAddress: string;
  payinExtraId: string | null;
  payoutExtraId: string | null;
  refundAddress: string | null;
  refundExtraId: string | null;
  createdAt: string;
  updatedAt: string;
  depositReceivedAt: string | null;
  payinHash: string | null;
  payoutHash: string | null;
  refundHash: string | null;
  refundAmount: number | null;
  userId: string | null;
  validUntil: string | null;
}

/** A fresh, well-formed deposit address of a network. */
function payinAddress(network: string): string {
  switch (network) {
    case 'btc':
      return bech32.encode('bc', [0, ...bech32.toWords(randomBytes(20))]);
    case 'sol':
      return base58Encode(randomBytes(32));
    case 'trx':
      return tronHexToBase58('41' + randomBytes(20).toString('hex'))!;
    default:
      return '0x' + randomBytes(20).toString('hex');
  }
}

export function changenowRouter(deps: { quotes: QuotesSource; apiKey: string; now: () => number }): Router {
  const router = express.Router();
  const exchanges = new Map<string, Exchange>();
  // test controls: a delay before every estimate, and how many estimates the caller abandoned
  let estimateDelayMs = 0;
  const stats = { estimates: 0, abandoned: 0 };
  const fail = (res: express.Response, status: number, error: string, message: string) => res.status(status).json({ error, message });

  const price = (ticker: string): number | undefined => {
    const id = CMC_IDS[ticker];
    if (!id) return undefined;
    const q = deps.quotes.quote(id) as { quote: { USD: { price: number } } };
    return q.quote.USD.price;
  };
  const estimate = (from: string, to: string, amount: number): number | undefined => {
    const pf = price(from);
    const pt = price(to);
    if (pf === undefined || pt === undefined) return undefined;
    return Number(((amount * pf * (1 - PROVIDER_FEE)) / pt).toFixed(8));
  };

  /** The pair's minimum in whole units of `from`, rounded up to 8 decimals; undefined for an inactive pair. */
  const minAmount = (from: string, to: string): number | undefined => {
    const pf = price(from);
    if (pf === undefined || price(to) === undefined) return undefined;
    return Math.ceil((MIN_EXCHANGE_USD / pf) * 1e8) / 1e8;
  };
  const tooSmall = (res: express.Response, from: string, to: string, amount: number): boolean => {
    const min = minAmount(from, to);
    if (min === undefined || amount >= min) return false;
    fail(res, 400, 'deposit_too_small', `Amount is less than minimal: ${min} ${from.toUpperCase()}`);
    return true;
  };

  const api = express.Router();
  api.use((req, res, next) => {
    const key = req.header('x-changenow-api-key');
    if (!key || (deps.apiKey !== '' && key !== deps.apiKey)) return fail(res, 401, 'unauthorized', 'Invalid api key');
    next();
  });

  api.get('/v2/exchange/estimated-amount', async (req, res) => {
    stats.estimates++;
    if (estimateDelayMs > 0) {
      const gone = await new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), estimateDelayMs);
        res.on('close', () => {
          clearTimeout(timer);
          resolve(!res.writableEnded);
        });
      });
      if (gone) {
        stats.abandoned++;
        return;
      }
    }
    const q = req.query as Record<string, string | undefined>;
    const from = (q.fromCurrency ?? '').toLowerCase();
    const to = (q.toCurrency ?? '').toLowerCase();
    const amount = Number(q.fromAmount);
    if (!from || !to || !(amount > 0)) return fail(res, 400, 'not_valid_params', 'fromCurrency, toCurrency and a positive fromAmount are required');
    if (tooSmall(res, from, to, amount)) return;
    const toAmount = estimate(from, to, amount);
    if (toAmount === undefined) return fail(res, 400, 'pair_is_inactive', `pair ${from}_${to} is inactive`);
    res.json({
      fromCurrency: from, fromNetwork: q.fromNetwork ?? from, toCurrency: to, toNetwork: q.toNetwork ?? to, flow: q.flow ?? 'standard', type: q.type ?? 'direct',
      rateId: null, validUntil: null, transactionSpeedForecast: '10-60', warningMessage: null, depositFee: 0, withdrawalFee: 0, userId: null,
      fromAmount: amount, toAmount,
    });
  });

  api.post('/v2/exchange', express.json(), (req, res) => {
    const b = (req.body ?? {}) as Record<string, unknown>;
    const from = String(b.fromCurrency ?? '').toLowerCase();
    const to = String(b.toCurrency ?? '').toLowerCase();
    const amount = Number(b.fromAmount);
    const address = typeof b.address === 'string' ? b.address : '';
    if (!from || !to || !(amount > 0) || !address) return fail(res, 400, 'not_valid_params', 'fromCurrency, toCurrency, a positive fromAmount and address are required');
    if (tooSmall(res, from, to, amount)) return;
    const toAmount = estimate(from, to, amount);
    if (toAmount === undefined) return fail(res, 400, 'pair_is_inactive', `pair ${from}_${to} is inactive`);
    const now = new Date(deps.now()).toISOString();
    const fromNetwork = String(b.fromNetwork || from);
    const e: Exchange = {
      id: randomBytes(7).toString('hex'), status: 'waiting', fromCurrency: from, fromNetwork, toCurrency: to, toNetwork: String(b.toNetwork || to),
      expectedAmountFrom: amount, expectedAmountTo: toAmount, amountFrom: null, amountTo: null, payinAddress: payinAddress(fromNetwork), payoutAddress: address,
      payinExtraId: null, payoutExtraId: typeof b.extraId === 'string' && b.extraId ? b.extraId : null,
      refundAddress: typeof b.refundAddress === 'string' && b.refundAddress ? b.refundAddress : null, refundExtraId: null,
      createdAt: now, updatedAt: now, depositReceivedAt: null, payinHash: null, payoutHash: null, refundHash: null, refundAmount: null, userId: null, validUntil: null,
    };
    exchanges.set(e.id, e);
    res.json({
      fromAmount: amount, toAmount, flow: 'standard', type: 'direct', payinAddress: e.payinAddress, payoutAddress: address, payinExtraId: null, payoutExtraId: e.payoutExtraId,
      fromCurrency: from, toCurrency: to, refundAddress: e.refundAddress, refundExtraId: null, id: e.id, fromNetwork, toNetwork: e.toNetwork,
    });
  });

  api.get('/v2/exchange/range', (req, res) => {
    const q = req.query as Record<string, string | undefined>;
    const from = (q.fromCurrency ?? '').toLowerCase();
    const to = (q.toCurrency ?? '').toLowerCase();
    if (!from || !to) return fail(res, 400, 'not_valid_params', 'fromCurrency and toCurrency are required');
    const min = minAmount(from, to);
    if (min === undefined) return fail(res, 400, 'pair_is_inactive', `pair ${from}_${to} is inactive`);
    res.json({ fromCurrency: from, fromNetwork: q.fromNetwork ?? from, toCurrency: to, toNetwork: q.toNetwork ?? to, flow: q.flow ?? 'standard', minAmount: min, maxAmount: null });
  });

  api.get('/v2/exchange/by-id', (req, res) => {
    const e = exchanges.get(String(req.query.id ?? ''));
    if (!e) return fail(res, 404, 'not_found', 'Exchange not found');
    res.json({ ...e, actionsAvailable: false, fromLegacyTicker: e.fromCurrency, toLegacyTicker: e.toCurrency });
  });

  router.use('/changenow', api);

  router.get('/sim/changenow/exchanges', (_req, res) => void res.json([...exchanges.values()]));
  router.put('/sim/changenow/delay', express.json(), (req, res) => {
    const ms = Number((req.body as { ms?: unknown })?.ms);
    if (!(ms >= 0 && ms <= 600_000)) return fail(res, 400, 'not_valid_params', 'ms must be 0 to 600000');
    estimateDelayMs = ms;
    res.json({ ms });
  });
  router.get('/sim/changenow/stats', (_req, res) => void res.json(stats));
  router.put('/sim/changenow/exchanges/:id', express.json(), (req, res) => {
    const e = exchanges.get(req.params.id);
    if (!e) return fail(res, 404, 'not_found', 'Exchange not found');
    const b = (req.body ?? {}) as Partial<Exchange>;
    if (!STATUSES.includes(b.status as Exchange['status'])) return fail(res, 400, 'not_valid_params', `status must be one of ${STATUSES.join(', ')}`);
    Object.assign(e, {
      status: b.status,
      payoutHash: b.payoutHash ?? e.payoutHash,
      refundHash: b.refundHash ?? e.refundHash,
      amountTo: b.amountTo ?? (b.status === 'finished' ? e.expectedAmountTo : e.amountTo),
      updatedAt: new Date(deps.now()).toISOString(),
    });
    res.json(e);
  });
  return router;
}
