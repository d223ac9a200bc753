import { randomBytes } from 'node:crypto';
import express, { type Router } from 'express';
import { EVM_CHAINS, INBOUND_CHAINS, LIQUIDITY_FEE_BPS, type ThorchainSim } from './thorchain-sim';

/**
 * A THORNode stand-in (https://dev.thorchain.org/swap-guide/quickstart-guide.html) under
 * `/thornode`: `GET /thorchain/quote/swap` (from_asset, to_asset, amount in 1e8 units,
 * destination) answering a vault `inbound_address` of the source chain (shared by every swap of
 * that chain, one per simulator run), `memo` (`=:<to_asset>:<destination>`), `expiry` (15
 * minutes), fees and `expected_amount_out` from the simulator's prices less a 0.35 % liquidity fee
 * and the destination chain's outbound fee (`fees.outbound`, in the destination asset);
 * `GET /thorchain/tx/status/{hash}` following a swap by its inbound hash; `GET
 * /thorchain/inbound_addresses` listing each chain's vault (the quote's `inbound_address`), its
 * `router` and halt flags, which callers must read fresh before every deposit. Errors are
 * `{code, message, details}` as THORNode's (`code` 3: invalid request). Minimums as THORNode's:
 * `recommended_min_amount_in` (1e8 units of the source asset) is four times the larger of the
 * source and the destination chain's outbound fee valued in the source asset, so it moves with
 * gas; a quote of less than a quarter of it cannot pay the fee and is refused with
 * `amount less than min swap amount (recommended_min_amount_in: N): invalid request`. EVM-chain
 * sources get the chain's `router` (one per chain per simulator run), through which THORNode's
 * notes send tokens (`depositWithExpiry`). Swaps progress by themselves: the state behind
 * (`ThorchainSim`) watches the simulator's EVM chains, and a deposit to the vault or through the
 * router is swapped or refunded by its memo and limit. Controls: `PUT /sim/thorchain/tx/{hash}`
 * `{outcome: done|refunded, outHash}` finishes the swap of an inbound on a chain nothing watches;
 * `GET /sim/thorchain/observed` lists the inbounds seen on the chains; `PUT
 * /sim/thorchain/halt/{chain}` `{halted: boolean}` halts a chain's trading (its quotes are
 * refused, inbound_addresses says `halted`); `POST /sim/thorchain/churn` `{chains?}` rotates
 * vaults (a deposit to a retired one is refunded); `PUT /sim/thorchain/gas/{chain}`
 * `{gas_rate}` sets a chain's gas rate (its outbound fee, and the minimums, follow).
 */

export function thornodeRouter(deps: { thorchain: ThorchainSim; now: () => number }): Router {
  const router = express.Router();
  const thor = deps.thorchain;
  const { halted } = thor;
  const vaultOf = (chain: string) => thor.vaultOf(chain);
  const routerOf = (chain: string) => thor.routerOf(chain);
  const fail = (res: express.Response, status: number, message: string) => res.status(status).json({ code: 3, message, details: [] });

  router.get('/thornode/thorchain/quote/swap', (req, res) => {
    const q = req.query as Record<string, string | undefined>;
    const from = (q.from_asset ?? '').toUpperCase();
    const to = (q.to_asset ?? '').toUpperCase();
    if (!/^[0-9]+$/.test(q.amount ?? '') || BigInt(q.amount!) === 0n) return fail(res, 400, 'bad amount');
    const pf = thor.priceUsd(from);
    const pt = thor.priceUsd(to);
    if (pf === undefined || pt === undefined) return fail(res, 400, `unknown asset ${pf === undefined ? from : to}`);
    const amount = BigInt(q.amount!);
    const minIn = thor.recommendedMinIn(from, to);
    if (minIn === undefined) return fail(res, 400, `unknown chain of ${from} or ${to}`);
    if (amount * 4n < minIn) return fail(res, 400, `amount less than min swap amount (recommended_min_amount_in: ${minIn}): invalid request`);
    const { out, liquidity, outbound } = thor.swapOut(from, to, amount)!;
    const total = liquidity + outbound;
    thor.notePool(from);
    const chain = from.split('.')[0];
    if (halted.has(chain) || halted.has(to.split('.')[0])) return fail(res, 400, "trading is halted, can't process swap");
    const body: Record<string, unknown> = {
      inbound_address: vaultOf(chain),
      inbound_confirmation_blocks: 1,
      inbound_confirmation_seconds: 12,
      outbound_delay_blocks: 0,
      outbound_delay_seconds: 0,
      fees: { asset: to, affiliate: '0', outbound: outbound.toString(), liquidity: liquidity.toString(), total: total.toString(), slippage_bps: Number(LIQUIDITY_FEE_BPS), total_bps: out + total > 0n ? Number((total * 10_000n) / (out + total)) : 10_000 },
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
    const evmRouter = routerOf(chain);
    if (evmRouter) body.router = evmRouter;
    if (q.destination) body.memo = `=:${to}:${q.destination}`;
    res.json(body);
  });

  router.get('/thornode/thorchain/inbound_addresses', (_req, res) => {
    res.json(
      INBOUND_CHAINS.map((chain) => {
        const evmRouter = routerOf(chain);
        const stopped = halted.has(chain);
        return {
          chain,
          pub_key: `thorpub1addwnpepq${randomBytes(4).toString('hex')}`,
          address: vaultOf(chain),
          ...(evmRouter ? { router: evmRouter } : {}),
          halted: stopped,
          global_trading_paused: false,
          chain_trading_paused: stopped,
          chain_lp_actions_paused: stopped,
          gas_rate: String(thor.gasRateOf(chain)),
          gas_rate_units: EVM_CHAINS.has(chain) ? 'gwei' : chain === 'GAIA' ? 'uatom' : 'satsperbyte',
          outbound_tx_size: EVM_CHAINS.has(chain) ? '100000' : '1000',
          outbound_fee: thor.outboundFee(chain).toString(),
          dust_threshold: chain === 'BTC' ? '10000' : '0',
        };
      }),
    );
  });

  router.put('/sim/thorchain/halt/:chain', express.json(), (req, res) => {
    const chain = String(req.params.chain).toUpperCase();
    const b = (req.body ?? {}) as { halted?: unknown };
    if (!(INBOUND_CHAINS as readonly string[]).includes(chain) || typeof b.halted !== 'boolean') return fail(res, 400, `a known chain (${INBOUND_CHAINS.join(', ')}) and halted (boolean) are required`);
    if (b.halted) halted.add(chain);
    else halted.delete(chain);
    res.json({ chain, halted: b.halted });
  });

  router.post('/sim/thorchain/churn', express.json(), (req, res) => {
    const b = (req.body ?? {}) as { chains?: unknown };
    const known = INBOUND_CHAINS as readonly string[];
    const chains = b.chains === undefined ? [...known] : b.chains;
    if (!Array.isArray(chains) || !chains.every((c) => typeof c === 'string' && known.includes(c.toUpperCase()))) return fail(res, 400, `chains: a list of known chains (${INBOUND_CHAINS.join(', ')})`);
    res.json(thor.churn(chains.map((c: string) => c.toUpperCase())));
  });

  router.put('/sim/thorchain/gas/:chain', express.json(), (req, res) => {
    const chain = String(req.params.chain).toUpperCase();
    const rate = (req.body ?? {}) as { gas_rate?: unknown };
    if (!(INBOUND_CHAINS as readonly string[]).includes(chain) || typeof rate.gas_rate !== 'number' || !(rate.gas_rate > 0)) return fail(res, 400, 'a known chain and gas_rate (a positive number) are required');
    thor.setGasRate(chain, rate.gas_rate);
    res.json({ chain, gas_rate: rate.gas_rate, outbound_fee: thor.outboundFee(chain).toString() });
  });

  router.get('/thornode/thorchain/tx/status/:hash', (req, res) => {
    const hash = req.params.hash.toUpperCase();
    if (!/^[0-9A-F]{64}$/.test(hash)) return fail(res, 400, 'invalid tx hash');
    const { done } = thor.statusOf(hash);
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
    thor.manual.set(req.params.hash.replace(/^0x/i, '').toUpperCase(), { outcome: b.outcome, outHash: b.outHash });
    res.json({ ok: true });
  });

  router.get('/sim/thorchain/observed', (_req, res) => void res.json(thor.observedSwaps()));
  return router;
}
