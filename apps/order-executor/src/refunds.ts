import { Counter, type Registry } from 'prom-client';
import type { FeePlan, OutgoingTransfers, TransferChain } from '@chainpipe/custody';
import type { Knex } from '@chainpipe/db';
import { OrderRepository, OutgoingTransferRepository, channelReturned, type OrderRow, type OutgoingTransferRow } from '@chainpipe/order-store';
import { REFUND_SENDING_STATES, refundAmount, refundReady } from '@chainpipe/orders';
import { errorMessage, type Logger } from '@chainpipe/runtime';

/** What a refund needs of a chain besides the outgoing transfer itself (`EvmSender` and `TronSender` have both). */
export interface RefundChain extends Pick<TransferChain, 'receipt'> {
  balanceOf(address: string): Promise<bigint>;
  feePlan(from: string, to: string): Promise<FeePlan>;
}

export interface RefundJobDeps {
  db: Knex;
  /** The one way money leaves a deposit address: stored signed before its broadcast, one refund per order. */
  transfers: Pick<OutgoingTransfers, 'send' | 'broadcast' | 'follow'>;
  /** The refund side of a chain type; undefined where the platform sends nothing. */
  chains(chainType: string): RefundChain | undefined;
  /** Confirmations (its own block included) the deposit needs before its principal is sent back. */
  confirmations(chainType: string): number;
  logger: Logger;
  registry: Registry;
  /** Orders looked at per pass. */
  batchSize: number;
}

/**
 * The executor's refund job: failed swaps (and ManualReview orders an operator resolved as a
 * refund) whose principal is at the order's deposit address go back to the refund address, less
 * the network fee of the transfer (`refundAmount` of `@chainpipe/orders`). The transfer goes
 * through `OutgoingTransfers` (kind `refund`, one per order, stored before its broadcast, the
 * same bytes broadcast again after a crash); once it is confirmed the order takes `refund_sent`
 * through the state machine (`Refunded`, the hash on the order, an audit row that the outbox
 * publishes to orders.events.v1). The deposit must have its confirmations on the chain first.
 * Native coins only (of EVM chains and Tron): a token refund also needs
 * gas at the deposit address, which nothing provides yet (counted and logged for an operator).
 */
export class RefundJob {
  private readonly orders: OrderRepository;
  private readonly stored: OutgoingTransferRepository;
  private readonly log: Logger;
  private readonly outcomes: Counter<'outcome'>;
  private readonly nativeTokens = new Map<number, boolean>();

  constructor(private readonly deps: RefundJobDeps) {
    this.orders = new OrderRepository(deps.db);
    this.stored = new OutgoingTransferRepository(deps.db);
    this.log = deps.logger.child({ component: 'refunds' });
    this.outcomes = new Counter({
      name: 'chainpipe_agg_refund_transfers_total',
      help: 'Refund job outcomes: sent, confirmed (order Refunded), failed (an operator looks), nothing_after_fee, unsupported (token or chain), error (tried again next pass)',
      labelNames: ['outcome'],
      registers: [deps.registry],
    });
  }

  /** One pass: every order whose refund is due gets its transfer sent or followed. */
  async run(): Promise<void> {
    // the orders `refundReady` may accept, so that orders waiting for something else (a channel
    // still holding the principal, an operator) never fill the batch; a refund that failed for good
    // is an operator's, not every pass's
    const candidates: OrderRow[] = await this.deps.db('agg.orders as o')
      .whereIn('o.state', REFUND_SENDING_STATES)
      .whereNotNull('o.refund_address')
      .whereNotNull('o.deposit_amount')
      .whereNotNull('o.deposit_index')
      .where((q) =>
        q
          .where((failed) => failed.whereNot('o.state', 'ManualReview').whereNotNull('o.execution').where((held) => held.whereNull('o.forward_tx_hash').orWhereRaw("(o.execution->>'provider_outcome' = 'Refunded' or o.execution->>'outcome' = 'Refunded')")))
          .orWhere((manual) => manual.where('o.state', 'ManualReview').where('o.resolution', 'refund')),
      )
      .whereNotExists(function refundFailed() {
        this.select(this.client.raw('1')).from('agg.outgoing_transfers as t').whereRaw('t.order_id = o.id').where('t.kind', 'refund').where('t.status', 'failed');
      })
      .orderBy('o.id')
      .limit(this.deps.batchSize)
      .select('o.*');
    for (const order of candidates) {
      try {
        await this.refund(order);
      } catch (err) {
        this.outcomes.inc({ outcome: 'error' });
        this.log.warn({ msg: 'refund_failed', orderNo: order.order_no, err: errorMessage(err) });
      }
    }
  }

  private async refund(order: OrderRow): Promise<void> {
    const ready = refundReady({
      state: order.state,
      refundAddress: order.refund_address,
      received: order.deposit_amount === null ? null : BigInt(order.deposit_amount),
      executionRecorded: order.execution !== null,
      forwarded: order.forward_tx_hash !== null,
      channelReturned: channelReturned(order.execution),
      resolution: order.resolution,
    });
    if (!ready.ready) return;
    let row = await this.stored.find(order.id, 'refund');
    if (row) row = await this.deps.transfers.follow(await this.deps.transfers.broadcast(row));
    else {
      const sent = await this.send(order);
      if (!sent) return;
      row = await this.deps.transfers.follow(sent);
    }
    if (row.status === 'failed') {
      this.outcomes.inc({ outcome: 'failed' });
      this.log.error({ msg: 'refund_transfer_failed', orderNo: order.order_no, txHash: row.tx_hash, err: row.error });
      return;
    }
    if (row.status !== 'confirmed') return;
    const applied = await this.orders.apply(
      order,
      { type: 'refund_sent' },
      () => ({ refund_tx_hash: row.tx_hash }),
      { event: 'refund_sent', detail: { tx_hash: row.tx_hash, to: row.to_address, amount: row.amount, ...row.detail } },
    );
    if (applied.moved !== undefined) {
      this.outcomes.inc({ outcome: 'confirmed' });
      this.log.info({ msg: 'refund_sent', orderNo: order.order_no, from: applied.moved.from, txHash: row.tx_hash, amount: row.amount });
    }
  }

  /** Signs, stores and broadcasts the refund; undefined when there is nothing to send. */
  private async send(order: OrderRow): Promise<OutgoingTransferRow | undefined> {
    const chain = this.deps.chains(order.deposit_chain_type);
    if (!chain || !(await this.isNative(order.src_token_id))) {
      this.outcomes.inc({ outcome: 'unsupported' });
      this.log.warn({ msg: 'refund_not_supported', orderNo: order.order_no, chainType: order.deposit_chain_type, tokenId: order.src_token_id });
      return undefined;
    }
    // what goes back must have arrived for good: the deposit mined, successful and confirmed on this chain
    const deposit = order.deposit_tx_hash ? await chain.receipt(order.deposit_tx_hash) : { mined: false as const };
    if (!deposit.mined || !deposit.success || deposit.confirmations < this.deps.confirmations(order.deposit_chain_type)) return undefined;
    const from = { index: order.deposit_index!, address: order.deposit_address };
    const to = order.refund_address!;
    const [plan, held] = await Promise.all([chain.feePlan(from.address, to), chain.balanceOf(from.address)]);
    const principal = BigInt(order.deposit_amount!);
    const amount = refundAmount({ principal, held, networkFee: plan.maxNetworkFee });
    if (amount.kind === 'nothing_after_fee') {
      this.outcomes.inc({ outcome: 'nothing_after_fee' });
      this.log.warn({ msg: 'refund_nothing_after_fee', orderNo: order.order_no, available: amount.available.toString(), networkFee: amount.networkFee.toString() });
      return undefined;
    }
    const row = await this.deps.transfers.send({
      orderId: order.id,
      kind: 'refund',
      chainType: order.deposit_chain_type,
      from,
      call: { to, value: amount.value, fees: plan },
      asset: null,
      amount: amount.value,
      detail: { principal: principal.toString(), held: held.toString(), network_fee: plan.maxNetworkFee.toString(), resolution: order.resolution },
    });
    this.outcomes.inc({ outcome: 'sent' });
    this.log.info({ msg: 'refund_broadcast', orderNo: order.order_no, txHash: row.tx_hash, to, amount: amount.value.toString() });
    return row;
  }

  private async isNative(tokenId: number): Promise<boolean> {
    const cached = this.nativeTokens.get(tokenId);
    if (cached !== undefined) return cached;
    const row: { is_native: boolean } | undefined = await this.deps.db('price.tokens').where({ id: tokenId }).first('is_native');
    const native = row?.is_native === true;
    this.nativeTokens.set(tokenId, native);
    return native;
  }
}
