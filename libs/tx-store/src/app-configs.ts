import { NETWORKS } from '@chainpipe/chains';
import { StatementCache, type Knex } from '@chainpipe/db';

/** A row of tx.app_configs as pg returns it (bigint columns arrive as strings). */
export interface AppConfigRow {
  app_id: string;
  enable_ws: boolean;
  enable_webhook: boolean;
  webhook_url: string | null;
  webhook_secret_enc: string | null;
  ws_ack_resend_interval_seconds: number;
  webhook_delivery_status: string;
  webhook_retrying_since: string | number | null;
  webhook_last_failed_transaction_id: string | number | null;
  webhook_last_failure_reason: string | null;
  is_active: boolean;
  created_at: Date;
  updated_at: Date;
}

/** The client-writable columns as stored: the webhook secret sealed, never in plain text. */
export type ConfigColumns = Pick<AppConfigRow, 'enable_ws' | 'enable_webhook' | 'webhook_url' | 'webhook_secret_enc' | 'ws_ack_resend_interval_seconds' | 'is_active'>;

/** What decides where an application's pushes go: its configuration switches and whether it is enabled at all. */
export interface AppSwitches {
  enable_ws: boolean;
  enable_webhook: boolean;
  webhook_url: string | null;
  is_active: boolean;
  /** core.apps.is_active: a disabled application gets nothing. */
  app_active: boolean;
}

/**
 * tx.app_configs (one row per application) and the application's part of tx.webhook_queue: the
 * gateway writes and shows them, the matcher reads the switches. Every query is scoped by app_id.
 * (webhook-dispatcher's delivery state changes run under a row lock in libs/webhooks.)
 */
/** One webhook POST as written to tx.webhook_attempts (times in Unix ms). */
export interface WebhookAttempt {
  app_id: string;
  attempted_at: number;
  path: 'live' | 'retry';
  /** The POST's `webhook-id`. */
  webhook_id: string;
  /** Ids (tx.transactions.id) of the transactions it carried, in body order: a listing shows their hashes. */
  tx_ids: string[];
  transactions: number;
  delivered: boolean;
  status_code: number | null;
  error: string | null;
  latency_ms: number;
  /** The retry this failure scheduled; null when delivered or when it disabled the webhook. */
  next_retry_at: number | null;
}

/** A stored attempt as read back: its id, and the bigints as strings. */
export type WebhookAttemptRow = Omit<WebhookAttempt, 'app_id' | 'attempted_at' | 'next_retry_at' | 'webhook_id' | 'tx_ids'> & {
  id: string;
  attempted_at: string;
  next_retry_at: string | null;
  /** Null on attempts logged before they were kept. */
  webhook_id: string | null;
  /** The hashes of its transactions, in body order (read by their ids); null before they were kept. */
  tx_hashes: string[] | null;
};

/** Which attempts a listing keeps: by outcome, by a transaction the POST carried. */
export interface WebhookAttemptFilter {
  delivered?: boolean;
  txHash?: string;
}

/** The switches of a set of applications: read by tx-matcher for every consumer call that matched. */
const SWITCHES_SQL = `select a.app_id, a.is_active as app_active, c.enable_ws, c.enable_webhook, c.webhook_url, c.is_active
   from core.apps a left join tx.app_configs c on c.app_id = a.app_id
  where a.app_id = any($1::text[])`;

export class AppConfigRepository {
  /** The matcher's per-call read goes without knex's building (a statement of its own text). */
  private readonly statements: StatementCache;

  constructor(private readonly db: Knex) {
    this.statements = new StatementCache(db);
  }

  async find(appId: string): Promise<AppConfigRow | undefined> {
    return this.db('tx.app_configs').where({ app_id: appId }).first<AppConfigRow | undefined>();
  }

  /**
   * Creates or replaces the client-writable columns. The delivery state (status, retrying
   * since, last failure) belongs to the webhook dispatcher and is kept; so is created_at.
   */
  async replace(appId: string, columns: ConfigColumns, now: Date): Promise<void> {
    await this.db('tx.app_configs')
      .insert({ app_id: appId, ...columns, created_at: now, updated_at: now })
      .onConflict('app_id')
      .merge({ ...columns, updated_at: now });
  }

  /** Updates the given columns; an application without a row gets `whenMissing` inserted. */
  async update(appId: string, columns: Partial<ConfigColumns>, whenMissing: ConfigColumns, now: Date): Promise<void> {
    await this.db('tx.app_configs')
      .insert({ app_id: appId, ...whenMissing, created_at: now, updated_at: now })
      .onConflict('app_id')
      .merge({ ...columns, updated_at: now });
  }

  async remove(appId: string): Promise<boolean> {
    return (await this.db('tx.app_configs').where({ app_id: appId }).del()) > 0;
  }

  /**
   * Queued webhook deliveries of the application: how many, and when the queue is next due (Unix
   * ms; null while nothing is queued or the queue is parked).
   */
  async queueSummary(appId: string): Promise<{ pending: number; nextAttemptAtMs: number | null }> {
    const [queued, cfg] = await Promise.all([
      this.db('tx.webhook_queue').where({ app_id: appId }).first<{ pending: string } | undefined>(this.db.raw('count(*) as pending')),
      this.db('tx.app_configs').where({ app_id: appId }).first<{ webhook_next_attempt_at: string | null } | undefined>('webhook_next_attempt_at'),
    ]);
    const pending = Number(queued?.pending ?? 0);
    const next = cfg?.webhook_next_attempt_at;
    return { pending, nextAttemptAtMs: pending === 0 || next == null ? null : Number(next) };
  }

  /**
   * The application's webhook attempts (tx.webhook_attempts), newest first: `limit` of them with
   * an id below `beforeId` (null: from the newest). Keyset paging on (app_id, id).
   */
  async webhookAttempts(appId: string, beforeId: string | null, limit: number, filter: WebhookAttemptFilter = {}): Promise<WebhookAttemptRow[]> {
    const q = this.db('tx.webhook_attempts as a').where({ app_id: appId });
    if (beforeId !== null) q.andWhere('a.id', '<', beforeId);
    if (filter.delivered !== undefined) q.andWhere('delivered', filter.delivered);
    // The application's few days of attempts, walked by (app_id, id), filtered by the ids the hash
    // has on the chains (the stored transactions' unique index, probed per chain).
    if (filter.txHash !== undefined) {
      const chains = NETWORKS.map((n) => n.chainType);
      const ids = NETWORKS.map((n) => n.chainId);
      q.andWhereRaw('a.tx_ids && array(select t.id from tx.transactions t where t.chain_type = any(?::text[]) and t.chain_id = any(?::int[]) and t.tx_hash = ?)', [chains, ids, filter.txHash]);
    }
    const hashes = this.db.raw('(select array_agg(t.tx_hash order by i.ord) from unnest(a.tx_ids) with ordinality i(id, ord) join tx.transactions t on t.id = i.id) as tx_hashes');
    return q.orderBy('a.id', 'desc').limit(limit).select<WebhookAttemptRow[]>('a.id', 'attempted_at', 'path', 'webhook_id', hashes, 'transactions', 'delivered', 'status_code', 'error', 'latency_ms', 'next_retry_at');
  }

  /** Switches of the applications (absent: no such application, or no configuration row). */
  async switches(appIds: readonly string[]): Promise<Map<string, AppSwitches | undefined>> {
    const out = new Map<string, AppSwitches | undefined>();
    if (appIds.length === 0) return out;
    const rows = await this.statements.nativeRows<AppSwitches & { app_id: string; enable_ws: boolean | null }>(SWITCHES_SQL, [[...appIds]]);
    for (const r of rows) {
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
