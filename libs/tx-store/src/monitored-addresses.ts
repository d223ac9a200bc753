import type { ChainType } from '@chainpipe/chains';
import type { AddressChangeMessage } from '@chainpipe/contracts';
import type { Knex } from '@chainpipe/db';

/** What one request does to one chain type of one application (addresses in their stored form). */
export interface AddressChange {
  chainType: ChainType;
  adds: string[];
  removes: string[];
}

/**
 * The addresses.changes.v1 messages of a change: one per chain type that changes something.
 * They carry every address of the request, not only the rows that were new: the matcher treats
 * them as set operations, and a client repeating a request whose earlier publish failed thereby
 * repairs the matcher's view.
 */
export function changeMessages(appId: string, changes: readonly AddressChange[], changedAtMs: number): AddressChangeMessage[] {
  return changes
    .filter((c) => c.adds.length > 0 || c.removes.length > 0)
    .map((c) => ({ app_id: appId, chain_type: c.chainType, adds: c.adds, removes: c.removes, changed_at: changedAtMs }));
}

/** One row of tx.monitored_addresses. */
export interface MonitoredRow {
  app_id: string;
  chain_type: string;
  address: string;
}

/** Namespace of the per-application advisory locks of this table ("tx" + 1). */
const ADDRESS_LOCK_NAMESPACE = 0x74780001;

/**
 * tx.monitored_addresses: (app_id, chain_type, address) rows, addresses in their stored form.
 * Writes are idempotent: adding a present address or removing an absent one changes nothing.
 */
export class MonitoredAddressRepository {
  constructor(private readonly db: Knex) {}

  /**
   * Applies changes of one application in one transaction, then runs `beforeCommit` (the
   * publish of the change) while the application's lock is still held. Two concurrent requests
   * of an application are therefore written and published in the same order, so the matcher
   * never ends up with an older change applied after a newer one.
   */
  async apply(appId: string, changes: readonly AddressChange[], beforeCommit: () => Promise<void>): Promise<{ inserted: number; deleted: number }> {
    return this.db.transaction(async (trx) => {
      const inTrx = new MonitoredAddressRepository(trx);
      await inTrx.lockApp(appId);
      const written = await inTrx.write(appId, changes);
      await beforeCommit();
      return written;
    });
  }

  /**
   * Takes the application's lock until the transaction this repository runs in ends (a
   * repository over a transaction: over the pool the lock would end with the statement). Writers
   * of one application's addresses take it first, so their writes and publishes keep one order.
   */
  async lockApp(appId: string): Promise<void> {
    await this.db.raw('select pg_advisory_xact_lock(?, hashtext(?))', [ADDRESS_LOCK_NAMESPACE, appId]);
  }

  /** Writes the changes of one application: the rows newly inserted and those deleted. */
  async write(appId: string, changes: readonly AddressChange[]): Promise<{ inserted: number; deleted: number }> {
    let inserted = 0;
    let deleted = 0;
    for (const change of changes) {
      if (change.removes.length > 0) {
        deleted += await this.db('tx.monitored_addresses').where({ app_id: appId, chain_type: change.chainType }).whereIn('address', change.removes).del();
      }
      if (change.adds.length > 0) {
        const rows = await this.db('tx.monitored_addresses')
          .insert(change.adds.map((address) => ({ app_id: appId, chain_type: change.chainType, address })))
          .onConflict(['app_id', 'chain_type', 'address'])
          .ignore()
          .returning('address');
        inserted += rows.length;
      }
    }
    return { inserted, deleted };
  }

  /** Whether any application monitors the address (the spec's global `contains`). */
  async existsAnywhere(chainType: string, address: string): Promise<boolean> {
    const row = await this.db('tx.monitored_addresses').where({ chain_type: chainType, address }).first(this.db.raw('1 as hit'));
    return row !== undefined;
  }

  /**
   * Every monitored address, in primary-key pages (keyset, so a million rows never sit in one
   * result set). `onPage` consumes each page before the next is read. Resolves with the count.
   */
  async scanAll(pageSize: number, onPage: (rows: MonitoredRow[]) => void): Promise<number> {
    let after: MonitoredRow | undefined;
    let total = 0;
    for (;;) {
      const q = this.db('tx.monitored_addresses').select('app_id', 'chain_type', 'address').orderBy([{ column: 'app_id' }, { column: 'chain_type' }, { column: 'address' }]).limit(pageSize);
      if (after) q.whereRaw('(app_id, chain_type, address) > (?, ?, ?)', [after.app_id, after.chain_type, after.address]);
      const rows = (await q) as MonitoredRow[];
      if (rows.length === 0) return total;
      onPage(rows);
      total += rows.length;
      if (rows.length < pageSize) return total;
      after = rows[rows.length - 1];
    }
  }
}
