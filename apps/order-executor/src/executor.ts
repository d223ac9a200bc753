import { Counter, type Registry } from 'prom-client';
import { AmountBelowProviderMinimum, tokenRefOf, type TokenRef } from '@chainpipe/aggregator';
import type { FeePlan, GasStation, OutgoingTransferIntent, OutgoingTransfers, TransferChain } from '@chainpipe/custody';
import type { Knex } from '@chainpipe/db';
import { OrderRepository, OrderRotation, OutgoingTransferRepository, type OrderRow, type OutgoingTransferRow } from '@chainpipe/order-store';
import { decideForward } from '@chainpipe/orders';
import { ReferenceRepository } from '@chainpipe/price-store';
import { errorMessage, systemClock, type Clock, type Logger } from '@chainpipe/runtime';
import type { DepositOnChain, HoldingsChain } from './deposit-check';
import { ForwardWait, type ChannelForwarder } from './forwarders';

/** What the executor needs of a chain: sending, what an address holds, and the fee plan of a call (`EvmSender` has all). */
export interface ExecutorChain extends TransferChain, HoldingsChain {
  feePlan(from: string, to: string, data?: `0x${string}`, gasLimit?: bigint): Promise<FeePlan>;
}

type PlannedTransfer = Omit<OutgoingTransferIntent, 'orderId' | 'chainType' | 'from'>;

export interface OrderExecutorDeps {
  db: Knex;
  transfers: OutgoingTransfers;
  /** The sending side of a chain type (EVM chains, Tron); undefined where nothing is sent. */
  chain(chainType: string): ExecutorChain | undefined;
  /**
   * Tops up a token's deposit address with the gas of its forward (docs/decisions.md, "gas for
   * token deposit addresses"); absent: the gas must be at the address already.
   */
  gas?: Pick<GasStation, 'ensure' | 'serves'>;
  /** The deposit read from the chain's node before anything is forwarded (docs/decisions.md#d161). */
  deposits: Pick<DepositOnChain, 'check'>;
  /** Confirmations a deposit needs before it is forwarded (its own block included). */
  confirmations(chainType: string): number;
  /** One forwarder per channel kind; orders of other kinds wait. */
  forwarders: readonly ChannelForwarder[];
  logger: Logger;
  registry: Registry;
  clock?: Pick<Clock, 'now'>;
  batchSize: number;
  /** Deadline of one provider call (quote, inbound addresses). */
  callTimeoutMs: number;
}

/**
 * Execution of paid orders (docs/decisions.md, "Money flow"): once the deposit has its
 * confirmations, net = received − fee_platform − fee_integrator; a fresh quote of the channel
 * for net; under the order's minimum output nothing is forwarded and the order is
 * `SlippageFailed` (the quote recorded; refundable), else the channel's forwarder plans the
 * transfers and `OutgoingTransfers` signs, stores and broadcasts them. The forward's hash goes on
 * the order with a `forwarded` event; the tracker follows the channel by it. An order has one
 * forward: once stored, it is what is broadcast (again) and recorded, whatever a quote says later.
 * A token's transfers are signed with the fee plans the deposit address holds the native coin
 * for: the gas station tops it up first when it does not, and the order waits for the top-up's
 * confirmations (`gas_topup`).
 */
export class OrderExecutor {
  private readonly orders: OrderRepository;
  private readonly forwardRotation = new OrderRotation();
  private readonly stored: OutgoingTransferRepository;
  private readonly reference: ReferenceRepository;
  private readonly forwarders: ReadonlyMap<string, ChannelForwarder>;
  private readonly clock: Pick<Clock, 'now'>;
  private readonly log: Logger;
  private readonly metrics;

  constructor(private readonly deps: OrderExecutorDeps) {
    this.orders = new OrderRepository(deps.db);
    this.stored = new OutgoingTransferRepository(deps.db);
    this.reference = new ReferenceRepository(deps.db);
    this.forwarders = new Map(deps.forwarders.map((f) => [f.kind, f]));
    this.clock = deps.clock ?? systemClock;
    this.log = deps.logger.child({ component: 'order-executor' });
    this.metrics = {
      forwards: new Counter({ name: 'chainpipe_agg_forwards_total', help: 'Paid orders decided by the executor, by channel kind and outcome (forwarded, slippage_failed, below_provider_minimum)', labelNames: ['channel', 'outcome'], registers: [deps.registry] }),
      waits: new Counter({ name: 'chainpipe_agg_forward_waits_total', help: 'Paid orders left for a later pass, by reason (confirmations, halted, no_forwarder, no_chain, nothing_to_forward, transfer_failed, gas_topup: the gas station\'s top-up of the deposit address is not yet confirmed, deposit_unverified: the chain\'s node does not show the deposit paying the address, or the address does not hold it)', labelNames: ['reason'], registers: [deps.registry] }),
      failures: new Counter({ name: 'chainpipe_agg_executor_failures_total', help: 'Executor steps that failed and are retried next pass, by step (forward, resume)', labelNames: ['step'], registers: [deps.registry] }),
    };
  }

  /** One pass: stored transfers broadcast again and followed (first, so a restart resends before deciding anything), then paid orders. */
  async pass(): Promise<void> {
    await this.deps.transfers.resumeOpen(this.deps.batchSize, (row, err) => {
      this.metrics.failures.inc({ step: 'resume' });
      this.log.warn({ msg: 'transfer_resume_failed', orderId: row.order_id, kind: row.kind, txHash: row.tx_hash, err: errorMessage(err) });
    });
    // an order that waits (confirmations, a halted chain, a top-up) stays in the set: the page after the last one each pass
    const awaiting = await this.forwardRotation.next(this.deps.batchSize, (afterId) => this.orders.listAwaitingForward(this.deps.batchSize, afterId));
    for (const order of awaiting) {
      try {
        await this.execute(order);
      } catch (err) {
        this.metrics.failures.inc({ step: 'forward' });
        this.log.warn({ msg: 'forward_failed', orderNo: order.order_no, err: errorMessage(err) });
      }
    }
  }

  /** Forwards one paid order, or moves it to SlippageFailed, or leaves it for a later pass. */
  async execute(order: OrderRow): Promise<void> {
    const forwarder = this.forwarders.get(order.channel_kind);
    if (!forwarder) return this.wait(order, 'no_forwarder');
    const chain = this.deps.chain(order.deposit_chain_type);
    if (!chain) return this.wait(order, 'no_chain');
    if (order.deposit_index === null || !order.deposit_tx_hash || order.deposit_amount === null) return;

    // the stored forward decides: one per order, whatever a quote says now
    let forward = await this.stored.find(order.id, 'forward');
    if (!forward) {
      // a top-up on its way: nothing is quoted or planned (no exchange opened) until it is confirmed
      const topUp = await this.topUpUnderway(order);
      if (topUp) return this.wait(order, topUp.reason, topUp.detail);
      const deposit = await chain.receipt(order.deposit_tx_hash);
      if (!deposit.mined || !deposit.success || deposit.confirmations < this.deps.confirmations(order.deposit_chain_type)) return this.wait(order, 'confirmations');
      // the node's own record of the deposit, and the address holding it: never the push's word alone
      const onChain = await this.deps.deposits.check(order, chain, { held: true });
      if (!onChain.ok) return this.wait(order, 'deposit_unverified', onChain.detail);
      const [src, dst] = await Promise.all([this.token(order.src_token_id), this.token(order.dst_token_id)]);
      const facts = { received: BigInt(order.deposit_amount), feePlatform: BigInt(order.fee_platform), feeIntegrator: BigInt(order.fee_integrator), minAcceptableOut: BigInt(order.min_acceptable_out) };
      const net = facts.received - facts.feePlatform - facts.feeIntegrator;
      const signal = AbortSignal.timeout(this.deps.callTimeoutMs);
      let quotedOut: bigint;
      try {
        quotedOut = net > 0n ? await forwarder.quote({ order, src, dst, net, signal }) : 0n;
      } catch (err) {
        if (err instanceof ForwardWait) return this.wait(order, 'halted', err.message);
        if (!(err instanceof AmountBelowProviderMinimum)) throw err;
        return this.refuse(order, forwarder.kind, 'below_provider_minimum', { net: net.toString(), min_amount_in: err.minAmountIn?.toString() ?? null });
      }
      const decision = decideForward(facts, quotedOut);
      if (decision.kind === 'nothing_to_forward') return this.wait(order, 'nothing_to_forward');
      if (decision.kind === 'slippage_failed') {
        return this.refuse(order, forwarder.kind, 'slippage_failed', { net: decision.net.toString(), quoted_out: decision.quotedOut.toString(), min_out: decision.minOut.toString() });
      }
      const from = { index: order.deposit_index, address: order.deposit_address };
      let plan;
      try {
        plan = await forwarder.plan({ order, src, dst, net: decision.net, minOut: decision.minOut, from, signal: AbortSignal.timeout(this.deps.callTimeoutMs) });
      } catch (err) {
        if (err instanceof ForwardWait) return this.wait(order, 'halted', err.message);
        throw err;
      }
      let planned: PlannedTransfer[] = plan.transfers;
      // where no station serves the chain a token's fees must be at the deposit address already
      if (this.deps.gas?.serves(order.deposit_chain_type) && planned.some((t) => t.asset !== null)) {
        const paid = await this.withGas(order, chain, from, planned);
        if (!paid) return;
        planned = paid;
      }
      const quote = { net: decision.net.toString(), quoted_out: quotedOut.toString(), min_out: decision.minOut.toString(), quoted_at: new Date(this.clock.now()).toISOString() };
      // an operator may have taken the order back meanwhile (order:refund): nothing leaves for a changed order
      const current = await this.orders.findById(order.id);
      if (!current || current.version !== order.version) return;
      for (const t of planned) {
        const row = await this.deps.transfers.send({ ...t, orderId: order.id, chainType: order.deposit_chain_type, from, detail: t.kind === 'forward' ? { ...t.detail, ...quote } : t.detail });
        if (row.status === 'failed') return this.wait(order, 'transfer_failed', `${row.kind} ${row.tx_hash}: ${row.error}`);
        if (row.kind === 'forward') forward = row;
      }
      if (!forward) throw new Error(`the ${forwarder.kind} forwarder planned no forward`);
    } else {
      forward = await this.deps.transfers.broadcast(forward);
    }
    if (forward.status === 'failed') return this.wait(order, 'transfer_failed', `forward ${forward.tx_hash}: ${forward.error}`);
    await this.recordForward(order, forwarder.kind, forward);
  }

  /** The order's gas top-up while it is sent but not confirmed (or failed): why the order waits. */
  private async topUpUnderway(order: OrderRow): Promise<{ reason: 'gas_topup' | 'transfer_failed'; detail: string } | undefined> {
    if (!this.deps.gas) return undefined;
    let row = await this.stored.find(order.id, 'gas_topup_forward');
    if (!row || row.status === 'confirmed') return undefined;
    row = await this.deps.transfers.follow(await this.deps.transfers.broadcast(row));
    if (row.status === 'failed') return { reason: 'transfer_failed', detail: `gas top-up ${row.tx_hash}: ${row.error}` };
    return row.status === 'confirmed' ? undefined : { reason: 'gas_topup', detail: row.tx_hash };
  }

  /**
   * A token leaves by contract calls whose gas the deposit address pays in the native coin: the
   * transfers with the fee plans the address holds (or is topped up) for; undefined while the
   * station's top-up is on its way (counted as `gas_topup`) or failed.
   */
  private async withGas(order: OrderRow, chain: ExecutorChain, from: { index: number; address: string }, planned: PlannedTransfer[]): Promise<PlannedTransfer[] | undefined> {
    const fresh = await Promise.all(planned.map((t) => chain.feePlan(from.address, t.call.to, t.call.data as `0x${string}` | undefined, t.call.gasLimit)));
    const gas = await this.deps.gas!.ensure({ orderId: order.id, purpose: 'forward', chainType: order.deposit_chain_type, address: from.address, plans: fresh });
    if (gas.kind === 'waiting') {
      this.wait(order, 'gas_topup', gas.topUp.tx_hash);
      return undefined;
    }
    if (gas.kind === 'failed') {
      this.wait(order, 'transfer_failed', `gas top-up ${gas.topUp.tx_hash}: ${gas.topUp.error}`);
      return undefined;
    }
    const plans = gas.kind === 'ready' ? gas.plans : fresh;
    if (plans.length !== planned.length) throw new Error(`the gas top-up ${gas.kind === 'ready' ? gas.topUp.tx_hash : ''} paid for ${plans.length} transfers, the forward plans ${planned.length}`);
    return planned.map((t, i) => ({ ...t, call: { ...t.call, fees: plans[i] } }));
  }

  /** The forward's hash on the order, its details in the execution record, and the `forwarded` event. */
  private async recordForward(order: OrderRow, channel: string, forward: OutgoingTransferRow): Promise<void> {
    const execution = { ...forward.detail, forward_tx_hash: forward.tx_hash, forwarded_amount: forward.amount, forwarded_at: new Date(this.clock.now()).toISOString() };
    const { moved } = await this.orders.apply(
      order,
      { type: 'forwarded' },
      // a forwarder that opened its own exchange with the provider (ChangeNOW) names it: the tracker follows that one
      () => ({ forward_tx_hash: forward.tx_hash, execution, ...(typeof forward.detail.provider_order_id === 'string' ? { provider_order_id: forward.detail.provider_order_id } : {}) }),
      { event: 'forwarded', detail: { tx_hash: forward.tx_hash, amount: forward.amount, to: forward.to_address, chain_type: forward.chain_type, ...(typeof forward.detail.memo === 'string' ? { memo: forward.detail.memo } : {}) } },
    );
    if (!moved) return;
    this.metrics.forwards.inc({ channel, outcome: 'forwarded' });
    this.log.info({ msg: 'order_forwarded', orderNo: order.order_no, txHash: forward.tx_hash, amount: forward.amount });
  }

  /** No forward: the fresh quote (or the channel's minimum) refuses the net amount; SlippageFailed, the quote recorded. */
  private async refuse(order: OrderRow, channel: string, reason: 'slippage_failed' | 'below_provider_minimum', detail: Record<string, string | null>): Promise<void> {
    const execution = { channel, outcome: 'SlippageFailed', reason, ...detail, quoted_at: new Date(this.clock.now()).toISOString() };
    const { moved } = await this.orders.apply(order, { type: 'forward_refused' }, () => ({ execution }), { event: 'forward_refused', detail: execution });
    if (!moved) return;
    this.metrics.forwards.inc({ channel, outcome: reason });
    this.log.info({ msg: 'order_not_forwarded', orderNo: order.order_no, reason, ...detail });
  }

  /**
   * Counted every pass (`chainpipe_agg_forward_waits_total`); logged when one order needs a
   * person. Waits of whole kinds (a chain nothing sends on yet, a channel kind without forwarder)
   * and routine ones are only counted: they would log every pass for every such order.
   */
  private wait(order: OrderRow, reason: 'confirmations' | 'halted' | 'no_forwarder' | 'no_chain' | 'nothing_to_forward' | 'transfer_failed' | 'gas_topup' | 'deposit_unverified', detail?: string): void {
    this.metrics.waits.inc({ reason });
    if (reason === 'transfer_failed' || reason === 'nothing_to_forward' || reason === 'deposit_unverified') this.log.error({ msg: 'forward_waits', orderNo: order.order_no, reason, detail });
    else if (reason === 'halted') this.log.info({ msg: 'forward_waits', orderNo: order.order_no, reason, detail });
  }

  private readonly tokens = new Map<number, TokenRef>();

  private async token(id: number): Promise<TokenRef> {
    const cached = this.tokens.get(id);
    if (cached) return cached;
    const [active] = await this.reference.tokensByIds([id]);
    // an order keeps its tokens after one is deactivated
    const row = active ?? (await this.reference.tokenRefRow(id));
    if (!row) throw new Error(`token ${id} is not in the price reference`);
    const ref = tokenRefOf(row);
    this.tokens.set(id, ref);
    return ref;
  }
}
