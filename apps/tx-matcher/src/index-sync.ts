import type { AddressChangeMessage } from '@chainpipe/contracts';
import { AddressIndex } from './address-index';
import type { MonitoredRow } from '@chainpipe/tx-store';

/**
 * Keeps the address index equal to tx.monitored_addresses: a full load from the table (at start
 * and on every periodic resync) plus the change notices of addresses.changes.v1 in between.
 *
 * Change notices are best effort (the table write stands even when the publish failed); the
 * periodic resync repairs whatever was missed, so a lost notice delays a match, never drops it
 * for good. While a reload runs, notices still apply to the live index and are also kept, then
 * replayed in order on the new index before it replaces the old one: a change that lands during
 * the scan is never undone by the older snapshot.
 */
export class IndexSync {
  private live = new AddressIndex();
  private pending: AddressChangeMessage[] | undefined;
  private loaded = false;

  get index(): AddressIndex {
    return this.live;
  }

  get isLoaded(): boolean {
    return this.loaded;
  }

  applyChange(change: AddressChangeMessage): void {
    applyTo(this.live, change);
    this.pending?.push(change);
  }

  /**
   * Rebuilds from `scan` (which feeds every row of the table, page by page) and swaps the new
   * index in. Only one reload runs at a time.
   */
  async reload(scan: (onPage: (rows: MonitoredRow[]) => void) => Promise<number>): Promise<number> {
    if (this.pending) throw new Error('a reload is already running');
    this.pending = [];
    try {
      const next = new AddressIndex();
      const rows = await scan((page) => {
        for (const r of page) next.add(r.app_id, r.chain_type, r.address);
      });
      for (const change of this.pending) applyTo(next, change);
      this.live = next;
      this.loaded = true;
      return rows;
    } finally {
      this.pending = undefined;
    }
  }
}

function applyTo(index: AddressIndex, change: AddressChangeMessage): void {
  for (const a of change.removes) index.remove(change.app_id, change.chain_type, a);
  for (const a of change.adds) index.add(change.app_id, change.chain_type, a);
}
