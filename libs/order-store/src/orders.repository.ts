import type { OrderEventMessage } from '@chainpipe/contracts';
import type { Knex } from '@chainpipe/db';
import type { OutgoingTransferRow } from './outgoing-transfers.repository';
import { REFUND_SENDING_STATES, SWEEPABLE_STATES, nextState, type ManualResolution, type OrderEvent, type OrderFacts, type OrderState } from '@chainpipe/orders';

/** One row of agg.orders (numeric columns arrive from pg as strings). */
export interface OrderRow {
  id: string;
  order_no: string;
  integrator_id: string | null;
  key_id: string | null;
  client_order_id: string | null;
  request_hash: string;
  src_token_id: number;
  dst_token_id: number;
  amount_in: string;
  dst_address: string;
  refund_address: string | null;
  refund_requested_at: Date | null;
  channel_id: number;
  channel_kind: string;
  provider_order_id: string;
  /** Where the order is paid: the platform's address of `deposit_index` (the channel's own for orders without an index). */
  deposit_address: string;
  /** Derivation index of the deposit address under the platform's key of the source family; unique. */
  deposit_index: number | null;
  deposit_memo: string | null;
  /** The contract a token deposit goes through (THORChain's router for EVM sources); null: a plain transfer. */
  deposit_router: string | null;
  deposit_chain_type: string;
  /** The channel's deposit details as quoted at creation: where the platform forwards the funds, with which memo, through which router. */
  forward_address: string | null;
  forward_memo: string | null;
  forward_router: string | null;
  /** The platform's forward of the deposit to the channel (agg.outgoing_transfers), by which the channel's status is followed. */
  forward_tx_hash: string | null;
  slippage: string;
  estimated_out: string;
  min_acceptable_out: string;
  fee_platform: string;
  fee_partner: string;
  fee_integrator: string;
  fee_platform_original: string;
  platform_fee_rate: string;
  partner_fee_rate: string;
  integrator_fee_rate: string;
  src_price_usd: string;
  src_price_as_of: Date | null;
  state: OrderState;
  version: number;
  expire_at: Date;
  auto_cancel_at: Date;
  deposit_tx_hash: string | null;
  deposit_amount: string | null;
  deposited_at: Date | null;
  payout_tx_hash: string | null;
  /** The transaction that gave the deposit back to `refund_address` (a failed swap, or an operator's refund). */
  refund_tx_hash: string | null;
  /** An operator's decision on a ManualReview order; null until one is taken. */
  resolution: ManualResolution | null;
  execution: Record<string, unknown> | null;
  extra: Record<string, unknown>;
  created_at: Date;
  updated_at: Date;
  settled_at: Date | null;
}

export type NewOrder = Omit<
  OrderRow,
  | 'id'
  | 'version'
  | 'refund_address'
  | 'refund_requested_at'
  | 'deposit_tx_hash'
  | 'deposit_amount'
  | 'deposited_at'
  | 'payout_tx_hash'
  | 'refund_tx_hash'
  | 'resolution'
  | 'forward_tx_hash'
  | 'execution'
  | 'created_at'
  | 'updated_at'
  | 'settled_at'
>;

/** An audit row of the outbox, with its order's number and integrator (bigint ids arrive from pg as strings). */
export type PendingAuditRow = Omit<OrderEventMessage, 'at' | 'event_id' | 'order_id'> & { id: string; order_id: string; created_at: Date };

/** An order the treasury sweep takes, with its source token's asset. */
export type SweepableOrderRow = OrderRow & { is_native: boolean; contract_address: string | null };

/** Columns a state change may also write. */
export type OrderPatch = Partial<
  Pick<
    OrderRow,
    'refund_address' | 'refund_requested_at' | 'deposit_tx_hash' | 'deposit_amount' | 'deposited_at' | 'payout_tx_hash' | 'refund_tx_hash' | 'resolution' | 'forward_tx_hash' | 'execution' | 'settled_at'
  >
>;

export interface AuditEntry {
  event: string;
  detail?: Record<string, unknown>;
}

/** A commission line: `amount` in the smallest unit of `tokenId`, valued at `priceUsd` per whole token. */
export interface LedgerLine {
  integratorId: string;
  tokenId: number;
  tokenDecimals: number;
  amount: bigint;
  priceUsd: string;
}

/**
 * Whether the channel reported the principal given back (a refund of the platform's forward, to
 * the deposit address): the tracker records the provider's `Refunded` as `provider_outcome`
 * beside the order's outcome (`ChainFailed`).
 */
export function channelReturned(execution: Record<string, unknown> | null): boolean {
  return execution?.provider_outcome === 'Refunded' || execution?.outcome === 'Refunded';
}

/** What the state machine reads of a stored order. */
export function orderFacts(o: OrderRow): OrderFacts {
  return {
    state: o.state,
    amount: BigInt(o.amount_in),
    expireAt: new Date(o.expire_at),
    received: o.deposit_amount === null ? null : BigInt(o.deposit_amount),
    resolution: o.resolution,
    platformHeld: o.deposit_index !== null,
    channelReturned: channelReturned(o.execution),
    forwarded: o.forward_tx_hash !== null,
  };
}

/** The outcome of `OrderRepository.apply`: the order as it ends up, and the transition this call made. */
export interface Applied {
  order: OrderRow;
  /** Undefined: the machine said `unchanged` (a replay, a late event). */
  moved?: { from: OrderState; to: OrderState };
  /** Why nothing moved, when nothing did. */
  reason?: string;
}

/** Namespace of the advisory locks that serialize creations of one client_order_id ("ag" + 1). */
const CLIENT_ORDER_LOCK = 0x61670001;

/**
 * agg.orders, their audit and the commission ledger. Every change of an order is a compare-and-set
 * on its `version` (the loser of a race learns it and decides what to do: the refund endpoint
 * answers `order_state_changed_retry`, the tracker reloads), and writes its audit row, and any
 * ledger line, in the same transaction.
 */
export class OrderRepository {
  constructor(private readonly db: Knex) {}

  /** The next deposit derivation index (never handed out twice; a failed creation leaves a gap). */
  async nextDepositIndex(db: Knex = this.db): Promise<number> {
    const { rows } = await db.raw<{ rows: { index: string }[] }>("select nextval('agg.order_deposit_index_seq') as index");
    return Number(rows[0].index);
  }

  findByNo(orderNo: string): Promise<OrderRow | undefined> {
    return this.db('agg.orders').where({ order_no: orderNo }).first();
  }

  findById(id: string): Promise<OrderRow | undefined> {
    return this.db('agg.orders').where({ id }).first();
  }

  findByClientOrderId(integratorId: string | null, clientOrderId: string, db: Knex = this.db): Promise<OrderRow | undefined> {
    return db('agg.orders')
      .whereRaw('coalesce(integrator_id, 0) = ?', [integratorId ?? 0])
      .where({ client_order_id: clientOrderId })
      .first();
  }

  /**
   * Runs `create` while holding the lock of (integrator, client_order_id): concurrent repeats of
   * one id wait for the first, then find its order instead of creating (and asking a channel for)
   * another. `create` receives the order found, if any, and returns the order to insert or a
   * result that inserts nothing.
   */
  async withClientOrderLock<T>(integratorId: string | null, clientOrderId: string, work: (existing: OrderRow | undefined, trx: Knex.Transaction) => Promise<T>): Promise<T> {
    return this.db.transaction(async (trx) => {
      await trx.raw('select pg_advisory_xact_lock(?, hashtext(?))', [CLIENT_ORDER_LOCK, `${integratorId ?? 0}:${clientOrderId}`]);
      return work(await this.findByClientOrderId(integratorId, clientOrderId, trx), trx);
    });
  }

  /** Inserts a new order and its creation audit row. */
  async insert(order: NewOrder, db: Knex = this.db): Promise<OrderRow> {
    const run = async (trx: Knex.Transaction) => {
      const [row] = await trx('agg.orders').insert({ ...order, extra: JSON.stringify(order.extra) }).returning<OrderRow[]>('*');
      await trx('agg.order_audit').insert({ order_id: row.id, from_state: null, to_state: row.state, event: 'created', detail: JSON.stringify({}) });
      return row;
    };
    return db.isTransaction ? run(db as Knex.Transaction) : this.db.transaction(run);
  }

  /**
   * Compare-and-set of an order read at `version`: writes the new state and columns, one audit
   * row and, when given, the commission ledger line (at most one per order). Undefined when the
   * order changed since it was read.
   */
  async transition(
    order: Pick<OrderRow, 'id' | 'version' | 'state'>,
    to: OrderState,
    patch: OrderPatch,
    audit: AuditEntry,
    ledger?: LedgerLine,
  ): Promise<OrderRow | undefined> {
    return this.db.transaction(async (trx) => {
      const set: Record<string, unknown> = { ...patch, state: to, version: order.version + 1, updated_at: trx.fn.now() };
      if (patch.execution !== undefined) set.execution = JSON.stringify(patch.execution);
      const [row] = await trx('agg.orders').where({ id: order.id, version: order.version }).update(set).returning<OrderRow[]>('*');
      if (!row) return undefined;
      await trx('agg.order_audit').insert({ order_id: order.id, from_state: order.state, to_state: to, event: audit.event, detail: JSON.stringify(audit.detail ?? {}) });
      if (ledger && ledger.amount > 0n) {
        await trx.raw(
          `insert into agg.integrator_commission_ledger (order_id, integrator_id, token_id, amount, price_usd, amount_usd, state)
           values (?, ?, ?, ?::numeric, ?::numeric, ?::numeric * ?::numeric / power(10::numeric, ?), 'Available')
           on conflict (order_id) do nothing`,
          [order.id, ledger.integratorId, ledger.tokenId, ledger.amount.toString(), ledger.priceUsd, ledger.amount.toString(), ledger.priceUsd, ledger.tokenDecimals],
        );
      }
      return row;
    });
  }

  /**
   * Applies `event` to the order through the state machine, reloading and re-deciding when
   * another writer got there first (the tracker, the executor, the refund endpoint, the admin
   * command). Returns the order as it ends up and the transition made, if any (none when the
   * machine says `unchanged`: replays land here, with the machine's reason). `ledger` is asked
   * for the commission line only when the transition earns one.
   */
  async apply(
    order: OrderRow,
    event: OrderEvent,
    patch: (to: OrderState) => OrderPatch,
    audit: AuditEntry,
    ledger?: (o: OrderRow) => Promise<LedgerLine | undefined>,
  ): Promise<Applied> {
    let current = order;
    for (let attempt = 0; attempt < 5; attempt++) {
      const t = nextState(orderFacts(current), event);
      if (t.kind === 'unchanged') return { order: current, reason: t.reason };
      const line = t.commission && ledger ? await ledger(current) : undefined;
      const changed = await this.transition(current, t.to, patch(t.to), audit, line);
      if (changed) return { order: changed, moved: { from: current.state, to: t.to } };
      const reloaded = await this.findById(current.id);
      if (!reloaded) return { order: current, reason: 'order gone' };
      current = reloaded;
    }
    throw new Error(`order ${order.order_no}: state kept changing under ${audit.event}`);
  }

  /**
   * Records a movement of funds that changes no state (the gas station's top-up of the deposit
   * address): an audit row in the order's current state, so an orders.events.v1 event, once per
   * `detail.tx_hash` however many passes or processes record it (they wait on the order's row).
   * False when it was recorded before.
   */
  async note(orderId: string, audit: { event: string; detail: Record<string, unknown> & { tx_hash: string } }): Promise<boolean> {
    return this.db.transaction(async (trx) => {
      const order: Pick<OrderRow, 'state'> | undefined = await trx('agg.orders').where({ id: orderId }).forUpdate().first('state');
      if (!order) throw new Error(`order ${orderId} not found`);
      const seen = await trx('agg.order_audit').where({ order_id: orderId, event: audit.event }).whereRaw("detail->>'tx_hash' = ?", [audit.detail.tx_hash]).first('id');
      if (seen) return false;
      await trx('agg.order_audit').insert({ order_id: orderId, from_state: order.state, to_state: order.state, event: audit.event, detail: JSON.stringify(audit.detail) });
      return true;
    });
  }

  /**
   * The `gas_topup` event of a confirmed top-up of the order's deposit address by the gas
   * station (an outgoing transfer of kind `gas_topup_<purpose>`), once per top-up.
   */
  async recordGasTopUp(topUp: Pick<OutgoingTransferRow, 'order_id' | 'tx_hash' | 'amount' | 'from_address' | 'to_address' | 'chain_type' | 'detail'>): Promise<boolean> {
    return this.note(topUp.order_id, {
      event: 'gas_topup',
      detail: { tx_hash: topUp.tx_hash, purpose: topUp.detail.purpose, amount: topUp.amount, from: topUp.from_address, to: topUp.to_address, chain_type: topUp.chain_type },
    });
  }

  /**
   * The outbox of orders.events.v1: takes up to `limit` audit rows not yet published, oldest
   * first, locked (rows another copy holds are skipped), hands them to `publish` and marks them
   * published in the same transaction, so a failed publish leaves them for the next pass. The
   * number of rows published.
   */
  async publishPendingAudit(limit: number, publish: (rows: PendingAuditRow[]) => Promise<void>): Promise<number> {
    return this.db.transaction(async (trx) => {
      const { rows } = await trx.raw<{ rows: PendingAuditRow[] }>(
        `select a.id, a.order_id, o.order_no, o.integrator_id, a.event, a.from_state, a.to_state, a.detail, a.created_at
           from agg.order_audit a join agg.orders o on o.id = a.order_id
          where a.published_at is null
          order by a.id
          limit ?
            for update of a skip locked`,
        [limit],
      );
      if (rows.length === 0) return 0;
      await publish(rows);
      await trx('agg.order_audit').whereIn('id', rows.map((r) => r.id)).update({ published_at: trx.fn.now() });
      return rows.length;
    });
  }

  audit(orderId: string): Promise<{ from_state: string | null; to_state: string; event: string; detail: Record<string, unknown>; created_at: Date }[]> {
    return this.db('agg.order_audit').where({ order_id: orderId }).orderBy('id').select('from_state', 'to_state', 'event', 'detail', 'created_at');
  }

  ledgerOf(orderId: string): Promise<{ integrator_id: string; token_id: number; amount: string; price_usd: string; amount_usd: string; state: string } | undefined> {
    return this.db('agg.integrator_commission_ledger').where({ order_id: orderId }).first('integrator_id', 'token_id', 'amount', 'price_usd', 'amount_usd', 'state');
  }

  /** Open orders in one of `states`, oldest first, for the tracker's sweeps. */
  listInStates(
    states: readonly OrderState[],
    limit: number,
    filter?: { expiredBefore?: Date; autoCancelBefore?: Date; refundAddressMissing?: boolean; afterId?: string | null },
  ): Promise<OrderRow[]> {
    const q = this.db('agg.orders').whereIn('state', states).orderBy('id').limit(limit);
    if (filter?.expiredBefore) q.where('expire_at', '<=', filter.expiredBefore);
    if (filter?.autoCancelBefore) q.where('auto_cancel_at', '<=', filter.autoCancelBefore);
    if (filter?.refundAddressMissing) q.whereNull('refund_address');
    if (filter?.afterId) q.where('id', '>', filter.afterId);
    return q;
  }

  /**
   * Paid orders the platform has still to forward: `Exchanging`, paid to their own deposit
   * address (an index), no forward recorded; by id from `afterId` on.
   */
  listAwaitingForward(limit: number, afterId?: string | null): Promise<OrderRow[]> {
    const q = this.db('agg.orders').where({ state: 'Exchanging' }).whereNotNull('deposit_index').whereNull('forward_tx_hash').orderBy('id').limit(limit);
    if (afterId) q.where('id', '>', afterId);
    return q;
  }

  /**
   * Orders the refund job may send back, by id from `afterId` on: in a refund-sending state with a
   * refund address, a deposit and a deposit index; a failed swap whose principal is at the address
   * (never forwarded, or the channel reported it given back) or a ManualReview order an operator
   * resolved as a refund; none whose refund transfer failed (an operator looks).
   */
  listRefundCandidates(limit: number, afterId: string | null): Promise<OrderRow[]> {
    const q = this.db('agg.orders as o')
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
      .limit(limit)
      .select('o.*');
    if (afterId) q.where('o.id', '>', afterId);
    return q;
  }

  /**
   * Orders whose own money is settled (`Refunded`, `Settled`) with a refund address and verified
   * deposits of their native source coin they did not take (docs/decisions.md#d166), whose
   * `return` transfer is not confirmed or failed yet; oldest first.
   */
  listExtrasToReturn(limit: number): Promise<OrderRow[]> {
    return this.db('agg.orders as o')
      .join('price.tokens as t', 't.id', 'o.src_token_id')
      .whereIn('o.state', ['Refunded', 'Settled'])
      .where('t.is_native', true)
      .whereNotNull('o.refund_address')
      .whereNotNull('o.deposit_index')
      .whereExists(function extra() {
        this.select(this.client.raw('1')).from('agg.order_deposits as d').whereRaw('d.order_id = o.id').where('d.status', 'verified').whereRaw('d.tx_hash is distinct from o.deposit_tx_hash');
      })
      .whereNotExists(function returned() {
        this.select(this.client.raw('1')).from('agg.outgoing_transfers as r').whereRaw('r.order_id = o.id').where('r.kind', 'return').whereIn('r.status', ['confirmed', 'failed']);
      })
      .orderBy('o.id')
      .limit(limit)
      .select('o.*');
  }

  /**
   * Orders whose fees the treasury sweep takes: earned (`Completed`, `Settled`), paid to their own
   * deposit address, with fees, whose sweep is not confirmed or failed yet; oldest first, with
   * their source token's asset. `orderNo`: that order only.
   */
  listSweepable(limit: number, orderNo?: string): Promise<SweepableOrderRow[]> {
    const q = this.db('agg.orders as o')
      .join('price.tokens as t', 't.id', 'o.src_token_id')
      .whereIn('o.state', SWEEPABLE_STATES)
      .whereNotNull('o.deposit_index')
      .whereRaw('(o.fee_platform::numeric + o.fee_integrator::numeric) > 0')
      .whereNotExists(function finished() {
        this.select(this.client.raw('1')).from('agg.outgoing_transfers as s').whereRaw('s.order_id = o.id').where('s.kind', 'sweep').whereIn('s.status', ['confirmed', 'failed']);
      })
      .orderBy('o.id')
      .limit(limit)
      .select<SweepableOrderRow[]>('o.*', 't.is_native', 't.contract_address');
    if (orderNo !== undefined) q.where('o.order_no', orderNo);
    return q;
  }

  /**
   * Deposit addresses of unpaid (`Depositing`) orders that the deposit application `appId` does
   * not monitor (tx.monitored_addresses), distinct, at most `limit`.
   */
  listUnmonitoredDepositAddresses(appId: string, limit: number): Promise<{ deposit_chain_type: string; deposit_address: string }[]> {
    return this.db('agg.orders as o')
      .where('o.state', 'Depositing')
      .whereNotExists(function monitored() {
        this.select(this.client.raw('1'))
          .from('tx.monitored_addresses as m')
          .where('m.app_id', appId)
          .whereRaw('m.chain_type = o.deposit_chain_type')
          .whereRaw('m.address = o.deposit_address');
      })
      .distinct('o.deposit_chain_type', 'o.deposit_address')
      .limit(limit);
  }

  /**
   * Orders whose deposit goes to this address (stored form) on this chain type: one for a platform
   * deposit address; orders from before deposit indexes may share a channel's address.
   */
  findByDepositAddress(chainType: string, address: string): Promise<OrderRow[]> {
    return this.db('agg.orders').where({ deposit_chain_type: chainType, deposit_address: address }).orderBy('id');
  }
}

/**
 * Pages through a set of orders that do not all leave it when handled (orders a pass only looks
 * at: a channel still pending, a forward that waits): each pass takes the page after the last
 * one, from the start again after a short page, so every order of the set is reached within
 * ⌈size / limit⌉ passes, however many older ones stay in it.
 */
export class OrderRotation {
  private afterId: string | null = null;

  async next(limit: number, page: (afterId: string | null) => Promise<OrderRow[]>): Promise<OrderRow[]> {
    const rows = await page(this.afterId);
    this.afterId = rows.length < limit ? null : rows[rows.length - 1].id;
    return rows;
  }
}
