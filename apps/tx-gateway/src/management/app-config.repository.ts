import type { Knex } from '@chainpipe/db';
import type { AppConfigRow, ConfigColumns } from './app-config';

/**
 * tx.app_configs (one row per application) and the application's part of tx.webhook_queue.
 * Every query is scoped by the caller's app_id.
 */
export class AppConfigRepository {
  constructor(private readonly db: Knex) {}

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

  /** Queued webhook deliveries of the application: how many, and the earliest next attempt (Unix ms). */
  async queueSummary(appId: string): Promise<{ pending: number; nextAttemptAtMs: number | null }> {
    const row = await this.db('tx.webhook_queue')
      .where({ app_id: appId })
      .first<{ pending: string; next_attempt_at: string | null }>(this.db.raw('count(*) as pending'), this.db.raw('min(next_attempt_at) as next_attempt_at'));
    return { pending: Number(row?.pending ?? 0), nextAttemptAtMs: row?.next_attempt_at == null ? null : Number(row.next_attempt_at) };
  }
}
