import type { Knex } from '@chainpipe/db';

/**
 * `unverified`: pushed to the order's address, not yet read from the chain's node; `verified`:
 * the node shows it paying the address `amount` of the order's source token; `not_on_chain`: the
 * node did not know it within the verification window (a block the chain never had);
 * `not_paid`: the node knows it, and it pays the address nothing of the source token.
 */
export type OrderDepositStatus = 'unverified' | 'verified' | 'not_on_chain' | 'not_paid';

/** One row of agg.order_deposits (bigint and numeric columns arrive from pg as strings). */
export interface OrderDepositRow {
  id: string;
  order_id: string;
  chain_type: string;
  network: string;
  tx_hash: string;
  address: string;
  status: OrderDepositStatus;
  amount: string | null;
  /** Another asset the transaction paid the address (a token contract or mint, or `native`), and how much; null for the source token. */
  other_asset: string | null;
  other_amount: string | null;
  tx_time: Date | null;
  seen_at: Date;
  checked_at: Date | null;
  checks: number;
  detail: string | null;
}

/** Deposits to orders' addresses, each verified against the chain's node before it moves an order (docs/decisions.md#d161). */
export class OrderDepositRepository {
  constructor(private readonly db: Knex) {}

  /** Records a transaction pushed to an order's address (once: a replay answers the row it has). */
  async record(d: Pick<OrderDepositRow, 'order_id' | 'chain_type' | 'network' | 'tx_hash' | 'address'>, seenAt: Date): Promise<OrderDepositRow> {
    const [inserted] = await this.db('agg.order_deposits').insert({ ...d, seen_at: seenAt }).onConflict(['order_id', 'tx_hash']).ignore().returning<OrderDepositRow[]>('*');
    return inserted ?? (await this.db('agg.order_deposits').where({ order_id: d.order_id, tx_hash: d.tx_hash }).first<OrderDepositRow>());
  }

  /** Unverified deposits, oldest first, after `afterId` (a page of the rotation). */
  unverified(limit: number, afterId: string | null = null): Promise<OrderDepositRow[]> {
    const q = this.db('agg.order_deposits').where('status', 'unverified').orderBy('id').limit(limit);
    if (afterId) q.where('id', '>', afterId);
    return q.select<OrderDepositRow[]>('*');
  }

  /** The outcome of one look at the chain's node (an unverified row only: a verdict is never changed). */
  async checked(id: string, outcome: { status: OrderDepositStatus; amount?: bigint; txTime?: Date | null; detail?: string | null; other?: { asset: string; amount: bigint } }, at: Date): Promise<void> {
    await this.db('agg.order_deposits')
      .where({ id, status: 'unverified' })
      .update({
        status: outcome.status,
        amount: outcome.amount?.toString() ?? null,
        tx_time: outcome.txTime ?? null,
        detail: outcome.detail ?? null,
        other_asset: outcome.other?.asset ?? null,
        other_amount: outcome.other?.amount.toString() ?? null,
        checked_at: at,
        checks: this.db.raw('checks + 1'),
      });
  }

  /**
   * What the order cannot use, oldest first: verified deposits of the source token other than the
   * one it took (`deposit_tx_hash`), and payments of another asset to its address.
   */
  extras(order: { id: string; deposit_tx_hash: string | null }): Promise<OrderDepositRow[]> {
    return this.db('agg.order_deposits')
      .where({ order_id: order.id })
      .where((q) => {
        q.where((source) => {
          source.where('status', 'verified');
          if (order.deposit_tx_hash) source.whereNot('tx_hash', order.deposit_tx_hash);
        }).orWhereNotNull('other_asset');
      })
      .orderBy('id')
      .select<OrderDepositRow[]>('*');
  }

  /** The network a deposit of the order was seen on, as recorded with it. */
  async networkOf(orderId: string, txHash: string | null): Promise<string | undefined> {
    const row: { network: string } | undefined = await this.db('agg.order_deposits').where({ order_id: orderId, tx_hash: txHash }).first('network');
    return row?.network;
  }

  /** Every deposit recorded for an order, oldest first. */
  ofOrder(orderId: string): Promise<OrderDepositRow[]> {
    return this.db('agg.order_deposits').where('order_id', orderId).orderBy('id').select<OrderDepositRow[]>('*');
  }
}
