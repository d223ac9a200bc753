import { randomBytes } from 'node:crypto';
import express, { type Router } from 'express';
import { bech32 } from '@scure/base';
import type { QuotesSource } from '../market/quotes-source';

/**
 * A THORNode stand-in (https://dev.thorchain.org/swap-guide/quickstart-guide.html) under
 * `/thornode`: `GET /thorchain/quote/swap` (from_asset, to_asset, amount in 1e8 units,
 * destination) answering a vault `inbound_address` of the source chain (shared by every swap of
 * that chain, one per simulator run), `memo` (`=:<to_asset>:<destination>`), `expiry` (15
 * minutes), fees and `expected_amount_out` from the simulator's prices less a 0.35 % liquidity fee;
 * `GET /thorchain/tx/status/{hash}` following a swap by its inbound hash. Errors are
 * `{code, message, details}` as THORNode's (`code` 3: invalid request). Minimums as THORNode's:
 * `recommended_min_amount_in` (1e8 units of the source asset) is the amount worth
 * 12.5 USD (THORNode derives it from the outbound fees, about four times the fee); a
 * quote of less than a quarter of it cannot pay the fee and is refused with
 * `amount less than min swap amount (recommended_min_amount_in: N): invalid request`. EVM-chain
 * sources get the chain's `router` (one per chain per simulator run), through which THORNode's
 * notes send tokens (`depositWithExpiry`). Control: `PUT /sim/thorchain/tx/{hash}` `{outcome: done|refunded,
 * outHash}` finishes the swap of an inbound transaction (no chain is watched here).
 */
const LIQUIDITY_FEE_BPS = 35n;
const MIN_SWAP_USD = 12.5;
const EVM_CHAINS: ReadonlySet<string> = new Set(['ETH', 'BSC', 'AVAX', 'ARB', 'BASE']);

const CMC_IDS: Readonly<Record<string, string>> = { 'ETH.ETH': '1027', 'BTC.BTC': '1', 'BSC.BNB': '1839', 'AVAX.AVAX': '5805', 'GAIA.ATOM': '3794', 'ARB.ETH': '1027', 'BASE.ETH': '1027' };

function cmcId(asset: string): string | undefined {
  const known = CMC_IDS[asset.toUpperCase()];
  if (known) return known;
  const symbol = asset.toUpperCase().split('.')[1]?.split('-')[0];
  return symbol === 'USDT' ? '825' : symbol === 'USDC' ? '3408' : undefined;
}

function vault(chain: string): string {
  if (chain === 'BTC') return bech32.encode('bc', [0, ...bech32.toWords(randomBytes(20))]);
  if (chain === 'GAIA') return bech32.encode('cosmos', bech32.toWords(randomBytes(20)));
  return '0x' + randomBytes(20).toString('hex');
}

export function thornodeRouter(deps: { quotes: QuotesSource; now: () => number }): Router {
  const router = express.Router();
  const vaults = new Map<string, string>();
  const routers = new Map<string, string>();
  const outcomes = new Map<string, { outcome: 'done' | 'refunded'; outHash: string }>();
  const fail = (res: express.Response, status: number, message: string) => res.status(status).json({ code: 3, message, details: [] });
  const price = (asset: string): number | undefined => {
    const id = cmcId(asset);
    return id ? (deps.quotes.quote(id) as { quote: { USD: { price: number } } }).quote.USD.price : undefined;
  };

  router.get('/thornode/thorchain/quote/swap', (req, res) => {
    const q = req.query as Record<string, string | undefined>;
    const from = (q.from_asset ?? '').toUpperCase();
    const to = (q.to_asset ?? '').toUpperCase();
    if (!/^[0-9]+$/.test(q.amount ?? '') || BigInt(q.amount!) === 0n) return fail(res, 400, 'bad amount');
    const pf = price(from);
    const pt = price(to);
    if (pf === undefined || pt === undefined) return fail(res, 400, `unknown asset ${pf === undefined ? from : to}`);
    const amount = BigInt(q.amount!);
    const minIn = BigInt(Math.ceil((MIN_SWAP_USD / pf) * 1e8));
    if (amount * 4n < minIn) return fail(res, 400, `amount less than min swap amount (recommended_min_amount_in: ${minIn}): invalid request`);
    // 1e8 units on both sides; the price ratio in millionths keeps it integer
    const ratio = BigInt(Math.round((pf / pt) * 1e12));
    const gross = (amount * ratio) / 1_000_000_000_000n;
    const liquidity = (gross * LIQUIDITY_FEE_BPS) / 10_000n;
    const out = gross - liquidity;
    const chain = from.split('.')[0];
    if (!vaults.has(chain)) vaults.set(chain, vault(chain));
    const body: Record<string, unknown> = {
      inbound_address: vaults.get(chain),
      inbound_confirmation_blocks: 1,
      inbound_confirmation_seconds: 12,
      outbound_delay_blocks: 0,
      outbound_delay_seconds: 0,
      fees: { asset: to, affiliate: '0', outbound: '0', liquidity: liquidity.toString(), total: liquidity.toString(), slippage_bps: Number(LIQUIDITY_FEE_BPS), total_bps: Number(LIQUIDITY_FEE_BPS) },
      expiry: Math.floor(deps.now() / 1000) + 15 * 60,
      warning: 'Do not cache this response. Do not send funds after the expiry.',
      notes: 'Transfer the inbound_address the asset with the memo. Do not use multi-in, multi-out transactions.',
      dust_threshold: '10000',
      recommended_min_amount_in: minIn.toString(),
      expected_amount_out: out.toString(),
      max_streaming_quantity: 0,
      streaming_swap_blocks: 0,
      total_swap_seconds: 12,
    };
    if (EVM_CHAINS.has(chain)) {
      if (!routers.has(chain)) routers.set(chain, '0x' + randomBytes(20).toString('hex'));
      body.router = routers.get(chain);
    }
    if (q.destination) body.memo = `=:${to}:${q.destination}`;
    res.json(body);
  });

  router.get('/thornode/thorchain/tx/status/:hash', (req, res) => {
    const hash = req.params.hash.toUpperCase();
    if (!/^[0-9A-F]{64}$/.test(hash)) return fail(res, 400, 'invalid tx hash');
    const done = outcomes.get(hash);
    res.json({
      tx: { id: hash },
      stages: {
        inbound_observed: { started: true, completed: true },
        inbound_finalised: { completed: true },
        swap_status: { pending: !done },
        swap_finalised: { completed: Boolean(done) },
        outbound_signed: { completed: Boolean(done) },
      },
      out_txs: done ? [{ id: done.outHash, memo: `${done.outcome === 'done' ? 'OUT' : 'REFUND'}:${hash}` }] : [],
    });
  });

  router.put('/sim/thorchain/tx/:hash', express.json(), (req, res) => {
    const b = (req.body ?? {}) as { outcome?: string; outHash?: string };
    if ((b.outcome !== 'done' && b.outcome !== 'refunded') || typeof b.outHash !== 'string') return fail(res, 400, 'outcome (done|refunded) and outHash are required');
    outcomes.set(req.params.hash.replace(/^0x/i, '').toUpperCase(), { outcome: b.outcome, outHash: b.outHash });
    res.json({ ok: true });
  });
  return router;
}
