import type { Knex } from '@chainpipe/db';
import type { AppSwitches } from './plan';

export interface MonitoredRow {
  app_id: string;
  chain_type: string;
  address: string;
}

/** What the matcher reads: the monitored address table (the truth) and delivery switches. */
export class MatcherRepository {
  constructor(private readonly db: Knex) {}

  /**
   * Every monitored address, in primary-key pages (keyset, so a million rows never sit in one
   * result set). `onPage` consumes each page before the next is read.
   */
  async scanMonitored(pageSize: number, onPage: (rows: MonitoredRow[]) => void): Promise<number> {
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

  /** Every registered DEX pool as `poolKey`. */
  async pools(): Promise<Set<string>> {
    const rows = (await this.db('tx.dex_pools').select('chain_type', 'chain_id', 'pool_address')) as Array<{ chain_type: string; chain_id: number; pool_address: string }>;
    return new Set(rows.map((r) => `${r.chain_type}:${r.chain_id}:${r.pool_address}`));
  }

  /** Switches of the applications (absent: no such application, or no configuration row). */
  async switches(appIds: readonly string[]): Promise<Map<string, AppSwitches | undefined>> {
    const out = new Map<string, AppSwitches | undefined>();
    if (appIds.length === 0) return out;
    const rows = (await this.db.raw(
      `select a.app_id, a.is_active as app_active, c.enable_ws, c.enable_webhook, c.webhook_url, c.is_active
         from core.apps a left join tx.app_configs c on c.app_id = a.app_id
        where a.app_id = any(?)`,
      [[...appIds]],
    )) as { rows: Array<AppSwitches & { app_id: string; enable_ws: boolean | null }> };
    for (const r of rows.rows) {
      out.set(
        r.app_id,
        r.enable_ws === null
          ? r.app_active
            ? undefined
            : { enable_ws: false, enable_webhook: false, webhook_url: null, is_active: false, app_active: false }
          : { enable_ws: r.enable_ws, enable_webhook: r.enable_webhook, webhook_url: r.webhook_url, is_active: r.is_active, app_active: r.app_active },
      );
    }
    return out;
  }
}
