import type { Knex } from '@chainpipe/db';

/**
 * What an outgoing transfer is for: an order's `forward` to its channel, the router `approve`
 * a token forward needs before it, a failed order's `refund`, a fee `sweep` to the treasury,
 * and the gas station's top-up of the deposit address before a token forward, refund or sweep
 * (`gas_topup_<purpose>`: one per order and purpose, as every kind; sent from the station's key,
 * not the deposit address's), and the `return` of the deposits the order could not take to its
 * refund address (docs/decisions.md#d166).
 */
export const OUTGOING_TRANSFER_KINDS = ['forward', 'approve', 'refund', 'sweep', 'gas_topup_forward', 'gas_topup_refund', 'gas_topup_sweep', 'return'] as const;
export type OutgoingTransferKind = (typeof OUTGOING_TRANSFER_KINDS)[number];

/** What a gas top-up pays for: the transfers of that kind (and an `approve` with a forward). */
export type GasTopUpPurpose = 'forward' | 'refund' | 'sweep';

/** The transfer kind of a gas top-up for `purpose`. */
export function gasTopUpKind(purpose: GasTopUpPurpose): OutgoingTransferKind {
  return `gas_topup_${purpose}`;
}

/** Namespace of the advisory locks that serialize the signing of one sender's transactions ("ag" + 2). */
const SENDER_LOCK = 0x61670002;

/**
 * `signed`: stored, maybe not yet on the chain (a crash may have come before the broadcast);
 * `broadcast`: a node took it; `confirmed`: mined successfully; `failed`: mined and reverted,
 * or refused by the node for good (a person looks; nothing is signed again on its own).
 */
export type OutgoingTransferStatus = 'signed' | 'broadcast' | 'confirmed' | 'failed';

/** One row of agg.outgoing_transfers (numeric and bigint columns arrive from pg as strings). */
export interface OutgoingTransferRow {
  id: string;
  order_id: string;
  kind: OutgoingTransferKind;
  /** The chain the transaction is for (`ethereum`, `bsc`…, as orders' deposit_chain_type). */
  chain_type: string;
  /** The deposit index whose key signed it, and its address. */
  from_index: number;
  from_address: string;
  /** The transaction's recipient: a vault, a router, a refund or treasury address, a token contract. */
  to_address: string;
  /** Contract of the token moved; null for the native coin. */
  asset: string | null;
  /** What the transfer moves (smallest unit of `asset`). */
  amount: string;
  nonce: string | null;
  raw_tx: string;
  tx_hash: string;
  status: OutgoingTransferStatus;
  block_number: string | null;
  error: string | null;
  /** Why and how: memo, vault, router, quote, expiry… */
  detail: Record<string, unknown>;
  created_at: Date;
  broadcast_at: Date | null;
  finished_at: Date | null;
}

export type NewOutgoingTransfer = Pick<OutgoingTransferRow, 'order_id' | 'kind' | 'chain_type' | 'from_index' | 'from_address' | 'to_address' | 'asset' | 'raw_tx' | 'tx_hash'> & {
  amount: bigint;
  nonce: number | null;
  detail?: Record<string, unknown>;
};

/**
 * agg.outgoing_transfers: signed transactions from the platform's deposit addresses, stored
 * before their broadcast. `store` never replaces a row: the first transfer of an (order, kind)
 * is the only one, and a writer that lost the race gets the stored one back, to broadcast
 * that instead of its own.
 */
export class OutgoingTransferRepository {
  constructor(private readonly db: Knex) {}

  find(orderId: string, kind: OutgoingTransferKind): Promise<OutgoingTransferRow | undefined> {
    return this.db('agg.outgoing_transfers').where({ order_id: orderId, kind }).first();
  }

  listByOrder(orderId: string): Promise<OutgoingTransferRow[]> {
    return this.db('agg.outgoing_transfers').where({ order_id: orderId }).orderBy('id');
  }

  /** Stores a signed transfer unless the order has one of this kind; the stored row, and whether it is this one. */
  async store(t: NewOutgoingTransfer): Promise<{ row: OutgoingTransferRow; created: boolean }> {
    const [inserted] = await this.db('agg.outgoing_transfers')
      .insert({ ...t, amount: t.amount.toString(), nonce: t.nonce, detail: JSON.stringify(t.detail ?? {}), status: 'signed' })
      .onConflict(['order_id', 'kind'])
      .ignore()
      .returning<OutgoingTransferRow[]>('*');
    if (inserted) return { row: inserted, created: true };
    const stored = await this.find(t.order_id, t.kind);
    if (!stored) throw new Error(`order ${t.order_id}: the ${t.kind} transfer was neither stored nor found`);
    return { row: stored, created: false };
  }

  /** A node took the transaction (kept when it is already further). */
  async markBroadcast(id: string): Promise<void> {
    await this.db('agg.outgoing_transfers').where({ id, status: 'signed' }).update({ status: 'broadcast', broadcast_at: this.db.fn.now() });
  }

  async markConfirmed(id: string, blockNumber: number): Promise<void> {
    await this.db('agg.outgoing_transfers')
      .where({ id })
      .whereIn('status', ['signed', 'broadcast'])
      .update({ status: 'confirmed', block_number: blockNumber, finished_at: this.db.fn.now() });
  }

  async markFailed(id: string, error: string, blockNumber?: number): Promise<void> {
    await this.db('agg.outgoing_transfers')
      .where({ id })
      .whereIn('status', ['signed', 'broadcast'])
      .update({ status: 'failed', error, block_number: blockNumber ?? null, finished_at: this.db.fn.now() });
  }

  /**
   * Runs `work` holding the lock of one sending address on one chain, with a repository on the
   * lock's transaction: what `work` stores commits with it, before the lock is released. For an
   * account many orders send from (the gas station), so two processes never sign one nonce.
   */
  async withSenderLock<T>(chainType: string, address: string, work: (locked: OutgoingTransferRepository) => Promise<T>): Promise<T> {
    return this.db.transaction(async (trx) => {
      await trx.raw('select pg_advisory_xact_lock(?, hashtext(?))', [SENDER_LOCK, `${chainType}:${address.toLowerCase()}`]);
      return work(new OutgoingTransferRepository(trx));
    });
  }

  /** The highest nonce of the sender's transfers not yet mined (`signed`, `broadcast`); null when none. */
  async highestOpenNonce(chainType: string, address: string): Promise<number | null> {
    const row = (await this.db('agg.outgoing_transfers')
      .where({ chain_type: chainType, from_address: address.toLowerCase() })
      .whereIn('status', ['signed', 'broadcast'])
      .max('nonce as nonce')
      .first()) as { nonce: string | null } | undefined;
    return row?.nonce === null || row?.nonce === undefined ? null : Number(row.nonce);
  }

  /** Transfers not yet mined (`signed`, `broadcast`), oldest first: what a restart broadcasts again and follows. */
  listOpen(limit: number, kinds?: readonly OutgoingTransferKind[]): Promise<OutgoingTransferRow[]> {
    const q = this.db('agg.outgoing_transfers').whereIn('status', ['signed', 'broadcast']).orderBy('id').limit(limit);
    if (kinds) q.whereIn('kind', kinds);
    return q;
  }
}
