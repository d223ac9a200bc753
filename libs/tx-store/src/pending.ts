import type { Knex } from '@chainpipe/db';

/** A stored transaction whose status is still `pending`. */
export interface PendingTx {
  id: string;
  network: string;
  tx_hash: string;
}

/**
 * Pending transactions to check at their chain origin, least recently checked first: those not
 * changed for `minAgeMs` (a node needs a moment to include them), at most `limit`. Orphaned rows
 * are left to the reorg logic. A check that finds the transaction still pending touches
 * `updated_at` (`markChecked`), so a large backlog is walked through rather than re-read.
 */
export async function pendingTransactions(db: Knex, opts: { limit: number; minAgeMs: number }): Promise<PendingTx[]> {
  const { rows } = await db.raw<{ rows: PendingTx[] }>(
    `select id::text as id, network, tx_hash from tx.transactions
     where tx_status = 'pending' and not orphaned and updated_at < now() - make_interval(secs => ?)
     order by updated_at, id limit ?`,
    [opts.minAgeMs / 1000, opts.limit],
  );
  return rows;
}

/** Records that these pending transactions were checked now (they stay pending). */
export async function markChecked(db: Knex, ids: readonly string[]): Promise<void> {
  if (!ids.length) return;
  await db.raw(`update tx.transactions set updated_at = now() where id = any(?::bigint[]) and tx_status = 'pending'`, [[...ids]] as unknown as Knex.RawBinding[]);
}
