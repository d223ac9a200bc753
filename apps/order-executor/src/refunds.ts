import { Counter, type Registry } from 'prom-client';
import { transferCalldata, type FeePlan, type GasStation, type OutgoingTransfers, type TransferChain } from '@chainpipe/custody';
import type { Knex } from '@chainpipe/db';
import { OrderDepositRepository, OrderRepository, OrderRotation, OutgoingTransferRepository, channelReturned, type OrderRow, type OutgoingTransferRow } from '@chainpipe/order-store';
import { refundAmount, refundReady } from '@chainpipe/orders';
import { ReferenceRepository } from '@chainpipe/price-store';
import { errorMessage, type Logger } from '@chainpipe/runtime';
import type { DepositOnChain, HoldingsChain } from './deposit-check';

/** What a refund needs of a chain besides the outgoing transfer itself (`EvmSender`, `BitcoinSender` and `TronSender` have both). */
export interface RefundChain extends Pick<TransferChain, 'receipt'>, HoldingsChain {
  feePlan(from: string, to: string, data?: `0x${string}`): Promise<FeePlan>;
}

export interface RefundJobDeps {
  db: Knex;
  /** The one way money leaves a deposit address: stored signed before its broadcast, one refund per order. */
  transfers: Pick<OutgoingTransfers, 'send' | 'broadcast' | 'follow'>;
  /** The refund side of a chain type; undefined where the platform sends nothing. */
  chains(chainType: string): RefundChain | undefined;
  /** The deposit read from the chain's node before its principal is sent back (docs/decisions.md#d161). */
  deposits: Pick<DepositOnChain, 'check' | 'providerReturn'>;
  /** Confirmations (its own block included) the deposit needs before its principal is sent back. */
  confirmations(chainType: string): number;
  logger: Logger;
  registry: Registry;
  /** Orders looked at per pass. */
  batchSize: number;
  /** Tops up a token's deposit address with the refund's gas; absent: token refunds are `unsupported`. */
  gas?: Pick<GasStation, 'ensure' | 'serves'>;
}

/**
 * The executor's refund job: failed swaps (and ManualReview orders an operator resolved as a
 * refund) whose principal is at the order's deposit address go back to the refund address, less
 * the network fee of the transfer (`refundAmount` of `@chainpipe/orders`); a token's principal
 * goes back whole by the token's `transfer`, its gas sent to the deposit address by the gas
 * station (docs/decisions.md, "gas for token deposit addresses"). The transfer goes
 * through `OutgoingTransfers` (kind `refund`, one per order, stored before its broadcast, the
 * same bytes broadcast again after a crash); once it is confirmed the order takes `refund_sent`
 * through the state machine (`Refunded`, the hash on the order, an audit row that the outbox
 * publishes to orders.events.v1). The deposit must have its confirmations on the chain first.
 * Native coins (EVM chains, Bitcoin, Tron) and tokens of EVM chains and Tron (their gas from the
 * gas station, D129); a token refund where no gas station serves the chain is counted and logged
 * for an operator.
 */
export class RefundJob {
  private readonly orders: OrderRepository;
  private readonly rotation = new OrderRotation();
  private readonly stored: OutgoingTransferRepository;
  private readonly reference: ReferenceRepository;
  private readonly log: Logger;
  private readonly outcomes: Counter<'outcome'>;
  private readonly tokens = new Map<number, { native: boolean; contract: string | null }>();

  constructor(private readonly deps: RefundJobDeps) {
    this.orders = new OrderRepository(deps.db);
    this.stored = new OutgoingTransferRepository(deps.db);
    this.reference = new ReferenceRepository(deps.db);
    this.log = deps.logger.child({ component: 'refunds' });
    this.outcomes = new Counter({
      name: 'chainpipe_agg_refund_transfers_total',
      help: 'Refund job outcomes: sent, confirmed (order Refunded), failed (an operator looks), nothing_after_fee, gas_topup (a token refund waits for the gas station\'s top-up), unsupported (chain, or a token without a gas station), deposit_unverified (the chain\'s node does not show the deposit paying the address), impossible (the whole deposit is less than the refund\'s network fee: FailedNoRefund), provider_refund_pending (a forwarded swap\'s refund by the channel, by its hash, not yet confirmed at the deposit address), returned (extra deposits sent back to the refund address, D166), error (tried again next pass)',
      labelNames: ['outcome'],
      registers: [deps.registry],
    });
  }

  /** One pass: every order whose refund is due gets its transfer sent or followed. */
  async run(): Promise<void> {
    // the orders `refundReady` may accept, so that orders waiting for something else (a channel
    // still holding the principal, an operator) never fill the batch; a refund that failed for good
    // is an operator's, not every pass's
    // one that is not sent yet (confirmations, a top-up on its way, dust) stays: the page after the last one each pass
    const candidates = await this.rotation.next(this.deps.batchSize, (afterId) => this.candidates(afterId));
    for (const order of candidates) {
      try {
        await this.refund(order);
      } catch (err) {
        this.outcomes.inc({ outcome: 'error' });
        this.log.warn({ msg: 'refund_failed', orderNo: order.order_no, err: errorMessage(err) });
      }
    }
    for (const order of await this.returnCandidates()) {
      try {
        await this.returnExtras(order);
      } catch (err) {
        this.outcomes.inc({ outcome: 'error' });
        this.log.warn({ msg: 'return_failed', orderNo: order.order_no, err: errorMessage(err) });
      }
    }
  }

  /**
   * Orders whose own money is settled (`Refunded`, `Settled`) with a refund address and deposits
   * of their native source coin they could not take (docs/decisions.md#d166), whose return is not
   * confirmed or failed yet.
   */
  private returnCandidates(): Promise<OrderRow[]> {
    return this.orders.listExtrasToReturn(this.deps.batchSize);
  }

  /**
   * The order's extra deposits of its native coin back to its refund address, once (a `return`
   * transfer): their sum, at most what the address holds beyond the fees a settled order still
   * owes the treasury, less the transfer's network fee. Confirmed, an `extra_returned` event.
   */
  private async returnExtras(order: OrderRow): Promise<void> {
    const chain = this.deps.chains(order.deposit_chain_type);
    if (!chain) return;
    let row = await this.stored.find(order.id, 'return');
    if (row) row = await this.deps.transfers.follow(await this.deps.transfers.broadcast(row));
    else {
      const extras = await new OrderDepositRepository(this.deps.db).extras(order);
      const sum = extras.filter((d) => d.status === 'verified').reduce((n, d) => n + BigInt(d.amount ?? '0'), 0n);
      const from = { index: order.deposit_index!, address: order.deposit_address };
      const to = order.refund_address!;
      const sweep = await this.stored.find(order.id, 'sweep');
      // a settled order's fees are the treasury's until their sweep is confirmed
      const owed = order.state === 'Settled' && sweep?.status !== 'confirmed' ? BigInt(order.fee_platform) + BigInt(order.fee_integrator) : 0n;
      const [plan, held] = await Promise.all([chain.feePlan(from.address, to), chain.balanceOf(from.address)]);
      const amount = refundAmount({ principal: sum, held: held > owed ? held - owed : 0n, networkFee: plan.maxNetworkFee });
      if (amount.kind === 'nothing_after_fee') {
        this.outcomes.inc({ outcome: 'nothing_after_fee' });
        return;
      }
      row = await this.deps.transfers.follow(
        await this.deps.transfers.send({
          orderId: order.id,
          kind: 'return',
          chainType: order.deposit_chain_type,
          from,
          call: { to, value: amount.value, fees: plan },
          asset: null,
          amount: amount.value,
          detail: { deposits: extras.map((d) => d.tx_hash), extras: sum.toString(), held: held.toString(), owed: owed.toString(), network_fee: plan.maxNetworkFee.toString() },
        }),
      );
      this.log.info({ msg: 'extras_returned', orderNo: order.order_no, txHash: row.tx_hash, amount: row.amount, to });
    }
    if (row.status === 'failed') {
      this.outcomes.inc({ outcome: 'failed' });
      this.log.error({ msg: 'return_transfer_failed', orderNo: order.order_no, txHash: row.tx_hash, err: row.error });
      return;
    }
    if (row.status !== 'confirmed') return;
    if (await this.orders.note(order.id, { event: 'extra_returned', detail: { tx_hash: row.tx_hash, to: row.to_address, amount: row.amount, deposits: row.detail.deposits } })) this.outcomes.inc({ outcome: 'returned' });
  }

  private candidates(afterId: string | null): Promise<OrderRow[]> {
    return this.orders.listRefundCandidates(this.deps.batchSize, afterId);
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
      // the refund address (a token refund's transaction goes to the token's contract)
      { event: 'refund_sent', detail: { tx_hash: row.tx_hash, to: order.refund_address, amount: row.amount, ...(row.asset ? { token: row.asset } : {}), ...row.detail } },
    );
    if (applied.moved !== undefined) {
      this.outcomes.inc({ outcome: 'confirmed' });
      this.log.info({ msg: 'refund_sent', orderNo: order.order_no, from: applied.moved.from, txHash: row.tx_hash, amount: row.amount });
    }
  }

  /** Signs, stores and broadcasts the refund; undefined when there is nothing to send (yet). */
  private async send(order: OrderRow): Promise<OutgoingTransferRow | undefined> {
    const chain = this.deps.chains(order.deposit_chain_type);
    const token = await this.token(order.src_token_id);
    if (!chain || (!token.native && (!this.deps.gas?.serves(order.deposit_chain_type) || !token.contract || !chain.tokenBalanceOf))) {
      this.outcomes.inc({ outcome: 'unsupported' });
      this.log.warn({ msg: 'refund_not_supported', orderNo: order.order_no, chainType: order.deposit_chain_type, tokenId: order.src_token_id });
      return undefined;
    }
    // what goes back must have arrived for good: the deposit mined, successful and confirmed on this chain
    const deposit = order.deposit_tx_hash ? await chain.receipt(order.deposit_tx_hash) : { mined: false as const };
    if (!deposit.mined || !deposit.success || deposit.confirmations < this.deps.confirmations(order.deposit_chain_type)) return undefined;
    // the node's own record of the deposit (what the address holds is read below: the refund is at most that)
    const onChain = await this.deps.deposits.check(order, chain, { held: false });
    if (!onChain.ok) {
      this.outcomes.inc({ outcome: 'deposit_unverified' });
      this.log.error({ msg: 'refund_deposit_unverified', orderNo: order.order_no, reason: onChain.reason, detail: onChain.detail });
      return undefined;
    }
    // a forwarded swap the channel gave back: its refund transaction, by hash, must have landed at the address first
    let providerRefund: Record<string, string> = {};
    if (order.forward_tx_hash !== null) {
      const back = await this.deps.deposits.providerReturn(order, chain, this.deps.confirmations(order.deposit_chain_type));
      if (!back.ok) {
        this.outcomes.inc({ outcome: 'provider_refund_pending' });
        if (back.reason === 'not_to_the_address') this.log.error({ msg: 'refund_provider_return_unusable', orderNo: order.order_no, detail: back.detail });
        return undefined;
      }
      providerRefund = { provider_refund_tx_hash: back.hash, provider_refund_amount: back.amount.toString() };
    }
    const from = { index: order.deposit_index!, address: order.deposit_address };
    const to = order.refund_address!;
    const principal = BigInt(order.deposit_amount!);
    if (!token.native) return this.sendToken(order, chain, token.contract!, from, to, principal, providerRefund);
    const [plan, held] = await Promise.all([chain.feePlan(from.address, to), chain.balanceOf(from.address)]);
    const amount = refundAmount({ principal, held, networkFee: plan.maxNetworkFee });
    if (amount.kind === 'nothing_after_fee') {
      this.outcomes.inc({ outcome: 'nothing_after_fee' });
      this.log.warn({ msg: 'refund_nothing_after_fee', orderNo: order.order_no, available: amount.available.toString(), networkFee: amount.networkFee.toString() });
      // the whole deposit cannot pay the transfer that would send it back: no refund can ever be made (docs/decisions.md#d163)
      if (principal <= plan.maxNetworkFee) await this.impossible(order, principal, plan.maxNetworkFee);
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
      detail: { principal: principal.toString(), held: held.toString(), network_fee: plan.maxNetworkFee.toString(), resolution: order.resolution, ...providerRefund },
    });
    this.sent(order, row, to);
    return row;
  }

  /**
   * A token's refund: `transfer(refund address, principal)` from the deposit address, the
   * principal whole (its gas is the station's native coin, nothing of the token pays for it:
   * docs/decisions.md, "gas for token deposit addresses"), once the station's top-up of the
   * refund's gas is confirmed (or the address holds it already).
   */
  private async sendToken(order: OrderRow, chain: RefundChain, contract: string, from: { index: number; address: string }, to: string, principal: bigint, providerRefund: Record<string, string>): Promise<OutgoingTransferRow | undefined> {
    const held = await chain.tokenBalanceOf!(contract, from.address);
    // no network fee in token units: the gas is paid in the native coin, by the station
    const amount = refundAmount({ principal, held, networkFee: 0n });
    if (amount.kind === 'nothing_after_fee') {
      this.outcomes.inc({ outcome: 'nothing_after_fee' });
      this.log.warn({ msg: 'refund_nothing_after_fee', orderNo: order.order_no, available: amount.available.toString(), networkFee: '0' });
      return undefined;
    }
    const data = transferCalldata(to, amount.value);
    const fresh = await chain.feePlan(from.address, contract, data);
    const gas = await this.deps.gas!.ensure({ orderId: order.id, purpose: 'refund', chainType: order.deposit_chain_type, address: from.address, plans: [fresh] });
    if (gas.kind === 'waiting') {
      this.outcomes.inc({ outcome: 'gas_topup' });
      return undefined;
    }
    if (gas.kind === 'failed') {
      this.outcomes.inc({ outcome: 'failed' });
      this.log.error({ msg: 'refund_gas_topup_failed', orderNo: order.order_no, txHash: gas.topUp.tx_hash, err: gas.topUp.error });
      return undefined;
    }
    const plan = gas.kind === 'ready' ? gas.plans[0] : fresh;
    const row = await this.deps.transfers.send({
      orderId: order.id,
      kind: 'refund',
      chainType: order.deposit_chain_type,
      from,
      call: { to: contract, value: 0n, data, fees: plan },
      asset: contract,
      amount: amount.value,
      detail: {
        principal: principal.toString(),
        held: held.toString(),
        network_fee: plan.maxNetworkFee.toString(),
        ...(gas.kind === 'ready' ? { gas_topup_tx_hash: gas.topUp.tx_hash } : {}),
        resolution: order.resolution,
        ...providerRefund,
      },
    });
    this.sent(order, row, to);
    return row;
  }

  /** A deposit smaller than its refund's network fee: FailedNoRefund, the figures in its audit row and event. */
  private async impossible(order: OrderRow, principal: bigint, networkFee: bigint): Promise<void> {
    const applied = await this.orders.apply(order, { type: 'refund_impossible' }, () => ({}), { event: 'refund_impossible', detail: { principal: principal.toString(), network_fee: networkFee.toString() } });
    if (applied.moved) {
      this.outcomes.inc({ outcome: 'impossible' });
      this.log.warn({ msg: 'refund_impossible', orderNo: order.order_no, principal: principal.toString(), networkFee: networkFee.toString() });
    }
  }

  private sent(order: OrderRow, row: OutgoingTransferRow, to: string): void {
    this.outcomes.inc({ outcome: 'sent' });
    this.log.info({ msg: 'refund_broadcast', orderNo: order.order_no, txHash: row.tx_hash, to, amount: row.amount });
  }

  private async token(tokenId: number): Promise<{ native: boolean; contract: string | null }> {
    const cached = this.tokens.get(tokenId);
    if (cached) return cached;
    const row = await this.reference.tokenAsset(tokenId);
    const token = { native: row?.is_native === true, contract: row?.contract_address ?? null };
    this.tokens.set(tokenId, token);
    return token;
  }
}
