import { Counter, type Registry } from 'prom-client';
import { networkByName, type ChainFamily, type ChainType, type NetworkInfo } from '@chainpipe/chains';
import { TOPICS, type TxPushMessage } from '@chainpipe/contracts';
import { ApiKeyRepository, type Knex } from '@chainpipe/db';
import type { TopicProducer } from '@chainpipe/kafka';
import { OrderDepositRepository, OrderRepository, OrderRotation, type AuditEntry, type LedgerLine, type OrderDepositRow, type OrderPatch, type OrderRow } from '@chainpipe/order-store';
import { otherPaymentTo, outcomeForOrder, paidTo, verifyDeposit, type ChainTxLookup, type ChannelOutcome, type OrderEvent, type OrderState } from '@chainpipe/orders';
import { type TokenRow } from '@chainpipe/price';
import { ReferenceRepository } from '@chainpipe/price-store';
import { errorMessage, systemClock, type Clock, type Logger } from '@chainpipe/runtime';
import { MonitoredAddressRepository, changeMessages } from '@chainpipe/tx-store';

/** The channel's view of an order (implemented over the channel adapters' `status`). */
export interface ChannelStatusSource {
  status(order: Pick<OrderRow, 'channel_id' | 'channel_kind' | 'provider_order_id' | 'deposit_index' | 'deposit_tx_hash' | 'forward_tx_hash'>, signal: AbortSignal): Promise<{ outcome: 'pending' | ChannelOutcome; txHash?: string }>;
}

export interface OrderTrackerDeps {
  db: Knex;
  producer: Pick<TopicProducer, 'publish'>;
  channels: ChannelStatusSource;
  logger: Logger;
  registry: Registry;
  /** Time of expiry, settlement and the timestamps the tracker writes. */
  clock?: Pick<Clock, 'now'>;
  depositAppId: string;
  /**
   * A transaction as the chain's node shows it (`fetchFromOrigin` over the configured origin): a
   * deposit moves an order only once read there (docs/decisions.md#d161). Rejects when the node
   * could not be asked (tried again next sweep).
   */
  chainTx(network: NetworkInfo, txHash: string): Promise<ChainTxLookup>;
  /** How long a pushed deposit the node does not know is asked for again before it counts as never on the chain. */
  depositVerifyWindowMs: number;
  /** Orders looked at per sweep step. */
  batchSize: number;
  statusTimeoutMs: number;
}

/** States whose channel still has something to say: the swap's outcome, or what became of a failed swap's principal. */
const OPEN_FOR_STATUS: readonly OrderState[] = ['Exchanging', 'ChainFailed', 'SlippageFailed', 'RefundAddressPending'];
const FAILED: readonly OrderState[] = ['ChainFailed', 'SlippageFailed'];

/**
 * Everything that happens to an order after its creation, each change through `nextState` of
 * `@chainpipe/orders` and a compare-and-set on the order's version (so copies of the tracker,
 * the refund endpoint and replays never apply a change twice), with its audit row in the same
 * transaction. The audit rows are the outbox of orders.events.v1 (`publishEvents`).
 */
export class OrderTracker {
  private readonly orders: OrderRepository;
  private readonly deposits: OrderDepositRepository;
  /** The last unverified deposit looked at by the sweep: the page after it next time. */
  private depositCursor: string | null = null;
  private readonly statusRotation = new OrderRotation();
  private readonly monitored: MonitoredAddressRepository;
  private readonly reference: ReferenceRepository;
  private readonly log: Logger;
  private readonly clock: Pick<Clock, 'now'>;
  private readonly metrics;

  constructor(private readonly deps: OrderTrackerDeps) {
    this.clock = deps.clock ?? systemClock;
    this.orders = new OrderRepository(deps.db);
    this.deposits = new OrderDepositRepository(deps.db);
    this.monitored = new MonitoredAddressRepository(deps.db);
    this.reference = new ReferenceRepository(deps.db);
    this.log = deps.logger.child({ component: 'order-tracker' });
    this.metrics = {
      transitions: new Counter({ name: 'chainpipe_agg_order_transitions_total', help: 'Order state changes by event and new state', labelNames: ['event', 'to'], registers: [deps.registry] }),
      events: new Counter({ name: 'chainpipe_agg_order_events_published_total', help: 'orders.events.v1 messages published', registers: [deps.registry] }),
      statusFailures: new Counter({ name: 'chainpipe_agg_channel_status_failures_total', help: 'Channel status calls that failed (retried next sweep)', registers: [deps.registry] }),
      ignoredDeposits: new Counter({ name: 'chainpipe_agg_deposits_ignored_total', help: 'Pushes to deposit addresses that moved no order, by reason (not_on_chain: the chain\'s node never knew the transaction; not_paid: the node\'s record pays the address nothing of the source token)', labelNames: ['reason'], registers: [deps.registry] }),
      depositChecks: new Counter({ name: 'chainpipe_agg_deposit_checks_total', help: 'Looks at the chain\'s node for a pushed deposit, by outcome (verified, not_on_chain, not_paid, unknown_to_node and not_mined: asked again, node_failed: the node could not be asked)', labelNames: ['outcome'], registers: [deps.registry] }),
    };
  }

  /**
   * Applies `event` to the order, reloading and re-deciding when another writer got there first.
   * Returns the order as it ends up (unchanged when the machine says so: replays land here).
   */
  async apply(order: OrderRow, event: OrderEvent, patch: (to: OrderState) => OrderPatch, audit: AuditEntry, ledger?: (o: OrderRow) => Promise<LedgerLine | undefined>): Promise<OrderRow> {
    const { order: after, moved } = await this.orders.apply(order, event, patch, audit, ledger);
    if (moved) {
      this.metrics.transitions.inc({ event: audit.event, to: moved.to });
      this.log.info({ msg: 'order_state_changed', orderNo: order.order_no, from: moved.from, to: moved.to, event: audit.event });
    }
    return after;
  }

  /**
   * tx.push.v1 records: deposits to the deposit addresses of the internal application. A push is
   * only word of a transaction (`POST /webhook` takes blocks without a secret): each is recorded
   * on its order and read from the chain's node before it moves anything (`verifyPushed`).
   */
  async handlePushes(messages: readonly TxPushMessage[]): Promise<void> {
    let changed = false;
    for (const m of messages) {
      if (m.app_id !== this.deps.depositAppId || m.orphaned) continue;
      const network = networkByName(m.network);
      if (!network) continue;
      for (const address of m.listen_address) {
        const target = await this.depositTarget(await this.orders.findByDepositAddress(network.chainType, address), m, address, network.family);
        if (!target) continue;
        const row = await this.deposits.record({ order_id: target.order.id, chain_type: network.chainType, network: network.network, tx_hash: m.tx.tx_hash, address }, new Date(this.clock.now()));
        if (row.status !== 'unverified') continue;
        if (await this.verifyPushed(row, network)) changed = true;
      }
    }
    if (changed) await this.publishEvents();
  }

  /**
   * A recorded deposit read from the chain's node: verified, it pays its order the amount the
   * node shows, at the node's block time, through the state machine (a short, over or late amount:
   * ManualReview, as always); a transaction the node does not know past the window, or whose
   * record pays the address nothing of the source token, moves nothing. True when an event was written (the order moved, or an extra deposit noted).
   */
  private async verifyPushed(row: OrderDepositRow, network: NetworkInfo): Promise<boolean> {
    let lookup: ChainTxLookup;
    try {
      lookup = await this.deps.chainTx(network, row.tx_hash);
    } catch (err) {
      this.metrics.depositChecks.inc({ outcome: 'node_failed' });
      this.log.warn({ msg: 'deposit_check_failed', txHash: row.tx_hash, network: row.network, err: errorMessage(err) });
      return false;
    }
    const order = await this.orders.findById(row.order_id);
    if (!order) return false;
    const token = await this.token(order.src_token_id, true);
    if (!token) return false;
    const now = new Date(this.clock.now());
    const pastWindow = now.getTime() - new Date(row.seen_at).getTime() >= this.deps.depositVerifyWindowMs;
    const verdict = verifyDeposit(lookup, row.address, { isNative: token.is_native, contractAddress: token.contract_address, family: network.family }, pastWindow);
    this.metrics.depositChecks.inc({ outcome: verdict.kind === 'wait' ? verdict.reason : verdict.kind });
    if (verdict.kind === 'wait') {
      await this.deposits.checked(row.id, { status: 'unverified', detail: verdict.reason }, now);
      return false;
    }
    if (verdict.kind === 'not_paid' && verdict.other) {
      // another asset at the order's address (the wrong token, the coin of a token order): on the record and an event (docs/decisions.md#d164)
      const other = { asset: verdict.other.asset, amount: verdict.other.amount.toString() };
      this.metrics.ignoredDeposits.inc({ reason: 'other_asset' });
      this.log.warn({ msg: 'deposit_other_asset', orderNo: order.order_no, txHash: row.tx_hash, network: row.network, ...other });
      const txTime = lookup.found && lookup.tx.tx_time ? new Date(Number(lookup.tx.tx_time) * 1000) : null;
      await this.deposits.checked(row.id, { status: 'not_paid', other: verdict.other, txTime, detail: 'another asset than the source token' }, now);
      const at = txTime ?? new Date(row.seen_at);
      return this.orders.note(order.id, { event: 'extra_deposit', detail: { tx_hash: row.tx_hash, ...other, network: row.network, at: at.toISOString(), state: order.state } });
    }
    if (verdict.kind !== 'verified') {
      this.metrics.ignoredDeposits.inc({ reason: verdict.kind });
      this.log.error({ msg: 'deposit_not_on_chain', verdict: verdict.kind, orderNo: order.order_no, txHash: row.tx_hash, network: row.network, address: row.address });
      await this.deposits.checked(row.id, { status: verdict.kind, detail: verdict.kind === 'not_paid' ? `transaction ${verdict.status}, nothing of the source token to the address` : 'unknown to the chain node' }, now);
      return false;
    }
    let moved = false;
    // applied before the row is marked: a crash between the two applies nothing twice (the hash is on the order)
    if (order.deposit_tx_hash !== row.tx_hash) {
      const at = verdict.txTime ?? new Date(row.seen_at);
      const after = await this.apply(
        order,
        { type: 'deposit', amount: verdict.amount, at },
        () => ({ deposit_tx_hash: row.tx_hash, deposit_amount: verdict.amount.toString(), deposited_at: at }),
        { event: 'deposit', detail: { tx_hash: row.tx_hash, amount: verdict.amount.toString(), network: row.network, at: at.toISOString() } },
      );
      // a version step is a written change (a ManualReview order records its first deposit in place)
      moved = after.version !== order.version;
      if (!moved) {
        this.metrics.ignoredDeposits.inc({ reason: `state_${order.state}` });
        // a deposit the order cannot take (a second payment, a top-up, one after a final state): on the record and an event (docs/decisions.md#d164)
        const noted = await this.orders.note(order.id, { event: 'extra_deposit', detail: { tx_hash: row.tx_hash, amount: verdict.amount.toString(), network: row.network, at: at.toISOString(), state: after.state } });
        if (noted) {
          moved = true; // an event to publish
          this.log.warn({ msg: 'extra_deposit', orderNo: order.order_no, txHash: row.tx_hash, amount: verdict.amount.toString(), state: after.state });
        }
      }
    }
    await this.deposits.checked(row.id, { status: 'verified', amount: verdict.amount, txTime: verdict.txTime }, now);
    return moved;
  }

  /** The sweep's look at deposits still unverified (a node that lagged or failed): a page after the last one each pass. */
  private async verifyUnverified(): Promise<boolean> {
    const page = await this.deposits.unverified(this.deps.batchSize, this.depositCursor);
    this.depositCursor = page.length < this.deps.batchSize ? null : page[page.length - 1].id;
    let changed = false;
    for (const row of page) {
      const network = networkByName(row.network);
      if (network && (await this.verifyPushed(row, network))) changed = true;
    }
    return changed;
  }

  /**
   * The order a transaction to a deposit address pays: the one order of that address, since every
   * order has its own (the platform's address of its deposit index), whatever the amount. What
   * the amount and timing mean is the state machine's word (short, over or late: ManualReview,
   * with the received amount recorded). An address that several orders share (orders from
   * before deposit indexes, paid to a channel's address) is not guessed at: it is counted and
   * logged for an operator. A transaction already counted pays nothing again (replays).
   */
  private async depositTarget(orders: OrderRow[], m: TxPushMessage, address: string, family: string): Promise<{ order: OrderRow } | undefined> {
    if (orders.length === 0) {
      this.metrics.ignoredDeposits.inc({ reason: 'no_order' });
      return undefined;
    }
    if (orders.length > 1) {
      this.metrics.ignoredDeposits.inc({ reason: 'shared_address' });
      this.log.error({ msg: 'deposit_to_shared_address', address, txHash: m.tx.tx_hash, orders: orders.map((o) => o.order_no) });
      return undefined;
    }
    const [order] = orders;
    if (order.deposit_tx_hash === m.tx.tx_hash) return undefined;
    const token = await this.token(order.src_token_id, true);
    if (!token) return undefined;
    const asToken = { isNative: token.is_native, contractAddress: token.contract_address, family: family as ChainFamily };
    // a pending transaction is pushed again when it settles; a settled one is recorded whatever it paid, the node says what (another asset included)
    if (paidTo(m.tx, address, asToken) === 0n && !otherPaymentTo(m.tx, address, asToken)) {
      this.metrics.ignoredDeposits.inc({ reason: m.tx.tx_status === 'success' ? 'not_the_source_token' : `status_${m.tx.tx_status}` });
      return undefined;
    }
    return { order };
  }

  /** One pass over the time- and channel-driven moves; then the outbox. */
  async sweep(): Promise<void> {
    await this.ensureDepositAddresses();
    await this.verifyUnverified();
    await this.expire();
    await this.pollChannels();
    await this.settle();
    await this.publishEvents();
  }

  /**
   * Unpaid orders whose deposit address is not monitored (the gateway's registration failed after
   * the order was stored): registered here, and the change published for the matcher.
   */
  private async ensureDepositAddresses(): Promise<void> {
    const appId = this.deps.depositAppId;
    const missing = await this.orders.listUnmonitoredDepositAddresses(appId, this.deps.batchSize);
    if (missing.length === 0) return;
    await new ApiKeyRepository(this.deps.db).createApp(appId, 'Aggregator deposit addresses');
    const byChain = new Map<string, string[]>();
    for (const m of missing) byChain.set(m.deposit_chain_type, [...(byChain.get(m.deposit_chain_type) ?? []), m.deposit_address]);
    const changes = [...byChain].map(([chainType, adds]) => ({ chainType: chainType as ChainType, adds, removes: [] }));
    await this.monitored.apply(appId, changes, () =>
      this.deps.producer.publish(TOPICS.addressesChanges, changeMessages(appId, changes, this.clock.now()).map((value) => ({ value }))),
    );
    this.log.warn({ msg: 'deposit_addresses_registered_late', count: missing.length });
  }

  private async expire(): Promise<void> {
    const now = new Date(this.clock.now());
    for (const order of await this.orders.listInStates(['Depositing'], this.deps.batchSize, { expiredBefore: now })) {
      await this.apply(order, { type: 'expire', at: now }, () => ({}), { event: 'expire', detail: { expire_at: new Date(order.expire_at).toISOString() } });
    }
  }

  private async pollChannels(): Promise<void> {
    // pending orders stay in the set: the page after the last one each pass, so none waits behind older ones
    const open = await this.statusRotation.next(this.deps.batchSize, (afterId) => this.orders.listInStates(OPEN_FOR_STATUS, this.deps.batchSize, { afterId }));
    for (const order of open) {
      let status: { outcome: 'pending' | ChannelOutcome; txHash?: string };
      try {
        status = await this.deps.channels.status(order, AbortSignal.timeout(this.deps.statusTimeoutMs));
      } catch (err) {
        this.metrics.statusFailures.inc();
        this.log.warn({ msg: 'channel_status_failed', orderNo: order.order_no, channel: order.channel_id, err: errorMessage(err) });
        continue;
      }
      if (status.outcome === 'pending' || status.outcome === order.state) continue;
      // the state machine decides on the provider's own word (a refund of the platform's forward
      // makes the order ChainFailed, recorded once); the record shows what it means for the order
      const outcome = outcomeForOrder(status.outcome, order.deposit_index !== null);
      const execution = {
        outcome,
        tx_hash: status.txHash ?? null,
        reported_at: new Date(this.clock.now()).toISOString(),
        // the provider's refund of the forward went back to the deposit address
        ...(outcome !== status.outcome ? { provider_outcome: status.outcome } : {}),
      };
      await this.apply(
        order,
        { type: 'channel_status', outcome: status.outcome },
        // the forward's details (the executor's) stay beside the channel's word
        (to) => ({ execution: { ...(order.execution ?? {}), ...execution }, ...(to === 'Completed' && status.txHash ? { payout_tx_hash: status.txHash } : {}) }),
        { event: 'channel_status', detail: execution },
      );
    }
    // a failed swap without a refund address waits for one (the refund request records it)
    for (const order of await this.orders.listInStates(FAILED, this.deps.batchSize, { refundAddressMissing: true })) {
      await this.apply(order, { type: 'refund_address_missing' }, () => ({}), { event: 'refund_address_missing' });
    }
  }

  private async settle(): Promise<void> {
    const now = new Date(this.clock.now());
    for (const order of await this.orders.listInStates(['Completed'], this.deps.batchSize)) {
      await this.apply(
        order,
        { type: 'settle' },
        () => ({ settled_at: now }),
        { event: 'settle', detail: { commission: order.integrator_id ? order.fee_integrator : '0', price_usd: order.src_price_usd } },
        async (o) => {
          if (!o.integrator_id || BigInt(o.fee_integrator) === 0n) return undefined;
          const token = await this.token(o.src_token_id, true);
          // valued at the source-token price snapshot taken when the order was created
          return { integratorId: String(o.integrator_id), tokenId: o.src_token_id, tokenDecimals: token!.decimals, amount: BigInt(o.fee_integrator), priceUsd: o.src_price_usd };
        },
      );
    }
    // an unpaid order is closed (no commission) once nobody can ask for its refund any more
    for (const order of await this.orders.listInStates(['CancelledNoDeposit'], this.deps.batchSize, { autoCancelBefore: now, refundAddressMissing: true })) {
      await this.apply(order, { type: 'settle' }, () => ({ settled_at: now }), { event: 'settle', detail: { commission: '0' } });
    }
  }

  /** Publishes audit rows not yet published, oldest first, and marks them; safe with several copies. */
  async publishEvents(): Promise<number> {
    let total = 0;
    for (;;) {
      const n = await this.orders.publishPendingAudit(this.deps.batchSize, async (rows) => {
        await this.deps.producer.publish(
          TOPICS.ordersEvents,
          rows.map((r) => ({
            value: {
              event_id: String(r.id),
              order_id: String(r.order_id),
              order_no: r.order_no,
              integrator_id: r.integrator_id === null ? null : String(r.integrator_id),
              event: r.event,
              from_state: r.from_state,
              to_state: r.to_state,
              detail: r.detail,
              at: new Date(r.created_at).getTime(),
            },
          })),
        );
      });
      total += n;
      this.metrics.events.inc(n);
      if (n < this.deps.batchSize) return total;
    }
  }

  private readonly tokens = new Map<number, TokenRow>();

  private async token(id: number, includeInactive = false): Promise<Pick<TokenRow, 'is_native' | 'contract_address' | 'decimals'> | undefined> {
    const cached = this.tokens.get(id);
    if (cached) return cached;
    const [row] = await this.reference.tokensByIds([id]);
    if (row) {
      this.tokens.set(id, row);
      return row;
    }
    if (!includeInactive) return undefined;
    return this.reference.tokenAsset(id);
  }
}
