import { randomBytes } from 'node:crypto';
import express, { type Router } from 'express';
import { bech32 } from '@scure/base';
import { base58Encode, tronHexToBase58 } from '@chainpipe/chains';
import type { QuotesSource } from '../market/quotes-source';
import type { PayinChain, PayinWallet } from './payin-chains';

/**
 * A ChangeNOW API v2 stand-in (https://documenter.getpostman.com/view/8180765/SVfTPnM8):
 * `GET /changenow/v2/exchange/estimated-amount`, `POST /changenow/v2/exchange`,
 * `GET /changenow/v2/exchange/by-id`, `GET /changenow/v2/exchange/range`, key in
 * `x-changenow-api-key`, errors as `{error, message}`. The range of every pair starts at the
 * amount worth 15 USD of the source currency (`minAmount`, whole units, `maxAmount` null); an
 * estimate or exchange below it is refused as ChangeNOW does, HTTP 400 `deposit_too_small`. Estimates follow the simulator's quotes (the CoinMarketCap stand-in's
 * random walks) less a 0.5 % provider fee; every exchange gets a fresh deposit (payin) address of
 * its network and waits.
 *
 * The fixed-rate flow: an estimate with `flow=fixed-rate&useRateId=true` answers a `rateId` and
 * its `validUntil` (an hour unless `PUT /sim/changenow/rate-ttl` `{ms}` says
 * otherwise); `POST /v2/exchange` with `flow: "fixed-rate"` needs that `rateId` before it
 * expires (HTTP 400 `rate_id_not_found_or_expired` otherwise) and keeps its amount. After the
 * payin (the simulated chain's balance of the payin address, whose key the stand-in holds: EVM
 * mainnets, Bitcoin and Tron, whose payins count once mined, and Solana mainnet, `sol`, whose
 * refunds stay off the chain) an
 * exchange moves by itself, one status per step: `confirming`, `exchanging`, `sending`,
 * `finished` with a `payoutHash` and `amountTo`; a fixed-rate payin after the rate's
 * `validUntil`, or short of `expectedAmountFrom`, is `refunded` instead: a transaction on the
 * chain from the payin address to its `refundAddress` of the payin less the network fee, its hash the
 * `refundHash`. Controls: `PUT /sim/changenow/exchanges/{id}` `{status, payoutHash?,
 * refundHash?, amountTo?}` sets an exchange's status by hand (it then stops moving by itself); `GET /sim/changenow/exchanges` lists them; `PUT
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
  flow: 'standard' | 'fixed-rate';
  /** Set by the `PUT` control: the exchange no longer moves by itself. */
  held?: boolean;
  /** The payin address's balance when the exchange was created: what arrives after is the payin. */
  baseline?: bigint;
  /** What the payin brought (smallest unit). */
  received?: bigint;
  /** The payin address's key (EVM, Bitcoin): ChangeNOW's own wallet, which sends a refund back on the chain. */
  payinKey?: PayinWallet;
}

/** A fixed rate handed out by an estimate: usable once, until `validUntil`. */
interface FixedRate {
  from: string;
  to: string;
  fromAmount: number;
  toAmount: number;
  validUntil: number;
}

/** An exchange as the API shows it: without the stand-in's own bookkeeping. */
function shown(e: Exchange): Omit<Exchange, 'held' | 'baseline' | 'received' | 'payinKey'> {
  const { held: _held, baseline: _baseline, received: _received, payinKey: _payinKey, ...rest } = e;
  return rest;
}

export interface ChangenowRouterDeps {
  quotes: QuotesSource;
  apiKey: string;
  now: () => number;
  /** The simulated chain of ChangeNOW's `network` (EVM mainnets, Bitcoin, `sol`); undefined where the simulator keeps no balances. */
  chain?: (network: string) => PayinChain | undefined;
  /** Time between two statuses of an exchange after its payin. */
  stepMs?: number;
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

export function changenowRouter(deps: ChangenowRouterDeps): Router {
  const router = express.Router();
  const exchanges = new Map<string, Exchange>();
  // test controls: a delay before every estimate, and how many estimates the caller abandoned
  let estimateDelayMs = 0;
  let rateTtlMs = 60 * 60_000;
  const stepMs = deps.stepMs ?? 1000;
  const rates = new Map<string, FixedRate>();
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
    const flow = q.flow === 'fixed-rate' ? 'fixed-rate' : 'standard';
    let rateId: string | null = null;
    let validUntil: string | null = null;
    if (flow === 'fixed-rate' && q.useRateId === 'true') {
      rateId = randomBytes(16).toString('hex');
      const until = deps.now() + rateTtlMs;
      rates.set(rateId, { from, to, fromAmount: amount, toAmount, validUntil: until });
      validUntil = new Date(until).toISOString();
    }
    res.json({
      fromCurrency: from, fromNetwork: q.fromNetwork ?? from, toCurrency: to, toNetwork: q.toNetwork ?? to, flow, type: q.type ?? 'direct',
      rateId, validUntil, transactionSpeedForecast: '10-60', warningMessage: null, depositFee: 0, withdrawalFee: 0, userId: null,
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
    const flow = b.flow === 'fixed-rate' ? 'fixed-rate' : 'standard';
    let toAmount = estimate(from, to, amount);
    if (toAmount === undefined) return fail(res, 400, 'pair_is_inactive', `pair ${from}_${to} is inactive`);
    let validUntil: string | null = null;
    if (flow === 'fixed-rate') {
      const rate = typeof b.rateId === 'string' ? rates.get(b.rateId) : undefined;
      if (!rate || rate.validUntil <= deps.now() || rate.from !== from || rate.to !== to || rate.fromAmount !== amount) {
        return fail(res, 400, 'rate_id_not_found_or_expired', 'Rate id not found or expired');
      }
      rates.delete(b.rateId as string);
      toAmount = rate.toAmount;
      validUntil = new Date(rate.validUntil).toISOString();
    }
    const now = new Date(deps.now()).toISOString();
    const fromNetwork = String(b.fromNetwork || from);
    const e: Exchange = {
      id: randomBytes(7).toString('hex'), status: 'waiting', fromCurrency: from, fromNetwork, toCurrency: to, toNetwork: String(b.toNetwork || to),
      expectedAmountFrom: amount, expectedAmountTo: toAmount, amountFrom: null, amountTo: null, payinAddress: payinAddress(fromNetwork), payoutAddress: address,
      payinExtraId: null, payoutExtraId: typeof b.extraId === 'string' && b.extraId ? b.extraId : null,
      refundAddress: typeof b.refundAddress === 'string' && b.refundAddress ? b.refundAddress : null, refundExtraId: null,
      createdAt: now, updatedAt: now, depositReceivedAt: null, payinHash: null, payoutHash: null, refundHash: null, refundAmount: null, userId: null, validUntil, flow,
    };
    const chain = deps.chain?.(fromNetwork);
    if (chain) {
      // a payin address of a key the stand-in holds, so a refund can leave it on the chain
      e.payinKey = chain.newWallet();
      e.payinAddress = e.payinKey.address;
      e.baseline = chain.balanceOf(e.payinAddress);
    }
    if (chain) e.baseline = chain.balanceOf(e.payinAddress);
    exchanges.set(e.id, e);
    res.json({
      fromAmount: amount, toAmount, flow, type: 'direct', payinAddress: e.payinAddress, payoutAddress: address, payinExtraId: null, payoutExtraId: e.payoutExtraId,
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

  /**
   * The provider's own progress: a waiting exchange whose payin address received its payin
   * moves on, one status per `stepMs`, as ChangeNOW's exchanges do after the payin.
   */
  const progress = async (e: Exchange): Promise<void> => {
    if (e.held || ['finished', 'failed', 'refunded'].includes(e.status)) return;
    const now = deps.now();
    const chain = deps.chain?.(e.fromNetwork);
    if (e.depositReceivedAt === null) {
      if (!chain || e.baseline === undefined) return;
      const received = chain.balanceOf(e.payinAddress) - e.baseline;
      if (received <= 0n) return;
      e.depositReceivedAt = new Date(now).toISOString();
      e.received = received;
      e.amountFrom = Number(received) / 10 ** chain.decimals;
      e.payinHash = '0x' + randomBytes(32).toString('hex');
    }
    const steps = Math.floor((now - Date.parse(e.depositReceivedAt)) / stepMs);
    const late = e.flow === 'fixed-rate' && e.validUntil !== null && Date.parse(e.depositReceivedAt) > Date.parse(e.validUntil);
    const short = e.flow === 'fixed-rate' && (e.amountFrom ?? 0) < e.expectedAmountFrom;
    const path: Exchange['status'][] = ['confirming', 'exchanging', 'sending', 'finished'];
    const next = path[Math.min(steps, path.length - 1)];
    if ((late || short) && steps >= 1) {
      // the payin goes back to the refund address from the payin address, less the transfer's network fee
      // refunded at once (a concurrent read must not send a second refund), the hash once signed
      Object.assign(e, { status: 'refunded', refundAmount: e.amountFrom, updatedAt: new Date(now).toISOString() });
      let refundHash = '0x' + randomBytes(32).toString('hex');
      let refundAmount = e.amountFrom;
      if (chain && e.payinKey && e.refundAddress && e.received) {
        const sent = await chain.sendBack(e.payinKey, e.refundAddress, e.received);
        if (sent) {
          refundHash = sent.hash;
          refundAmount = Number(sent.value) / 10 ** chain.decimals;
        }
      }
      Object.assign(e, { refundHash, refundAmount });
      return;
    } else if (next === 'finished') {
      Object.assign(e, { status: 'finished', payoutHash: '0x' + randomBytes(32).toString('hex'), amountTo: e.expectedAmountTo });
    } else e.status = next;
    e.updatedAt = new Date(now).toISOString();
  };

  api.get('/v2/exchange/by-id', async (req, res) => {
    const e = exchanges.get(String(req.query.id ?? ''));
    if (!e) return fail(res, 404, 'not_found', 'Exchange not found');
    await progress(e);
    res.json({ ...shown(e), actionsAvailable: false, fromLegacyTicker: e.fromCurrency, toLegacyTicker: e.toCurrency });
  });

  router.use('/changenow', api);

  router.get('/sim/changenow/exchanges', async (_req, res) => {
    for (const e of exchanges.values()) await progress(e);
    res.json([...exchanges.values()].map(shown));
  });
  router.put('/sim/changenow/rate-ttl', express.json(), (req, res) => {
    const ms = Number((req.body as { ms?: unknown })?.ms);
    if (!(ms >= 0 && ms <= 24 * 3600_000)) return fail(res, 400, 'not_valid_params', 'ms must be 0 to 86400000');
    rateTtlMs = ms;
    res.json({ ms });
  });
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
      held: true,
      status: b.status,
      payoutHash: b.payoutHash ?? e.payoutHash,
      refundHash: b.refundHash ?? e.refundHash,
      amountTo: b.amountTo ?? (b.status === 'finished' ? e.expectedAmountTo : e.amountTo),
      updatedAt: new Date(deps.now()).toISOString(),
    });
    res.json(shown(e));
  });
  return router;
}
