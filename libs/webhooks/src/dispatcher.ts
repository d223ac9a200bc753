import { createHash } from 'node:crypto';
import { Counter, type Registry } from 'prom-client';
import type { HttpTxWebhookRetry, TxPushMessage } from '@chainpipe/contracts';
import type { Knex } from '@chainpipe/db';
import { errorMessage, systemClock, type Clock, type Logger } from '@chainpipe/runtime';
import { toTransactionResult } from '@chainpipe/tx-records';
import { givenUp, retryDelayMs } from './schedule';
import { postWebhook, type SendResult, type SenderOptions } from './sender';
import { webhookHeaders } from './sign';

/** What one POST needs; `postWebhook` bound to the sender options in production. */
export type Send = (url: string, body: string, headers: Record<string, string>) => Promise<SendResult>;

export interface DispatcherDeps {
  db: Knex;
  send: Send;
  /** Opens a sealed webhook secret (SecretBox.open). */
  openSecret: (sealed: string) => string;
  /** Time of the retry schedule; injected so tests drive it. */
  clock?: Pick<Clock, 'now'>;
  logger: Logger;
  registry: Registry;
  /** Transactions per POST of a retry (spec: up to 100). */
  batchSize?: number;
  /** Batches one drain of an application sends at most before it yields to the others. */
  maxBatchesPerDrain?: number;
}

/** The nested `data.data` of POST /tx/api/v1/app/webhook/retry: the schema's (`http/tx/webhook-retry`). */
export type RetryReport = HttpTxWebhookRetry['data'];

interface ConfigRow {
  app_id: string;
  enable_webhook: boolean;
  webhook_url: string | null;
  webhook_secret_enc: string | null;
  webhook_delivery_status: string;
  webhook_retrying_since: string | null;
  is_active: boolean;
}

interface QueueRow {
  id: string;
  tx_id: string;
  tx_status: string | null;
  message_id: string | null;
  payload: unknown;
  attempts: number;
  first_failed_at: string;
  next_attempt_at: string;
}

const CONFIG_COLUMNS = ['app_id', 'enable_webhook', 'webhook_url', 'webhook_secret_enc', 'webhook_delivery_status', 'webhook_retrying_since', 'is_active'];

/** `webhook-id` of a batch: the message id of a single push, else a digest of the batch's ids. */
export function batchId(messageIds: readonly string[]): string {
  if (messageIds.length === 1) return messageIds[0];
  return 'b' + createHash('sha256').update(messageIds.join(',')).digest('hex').slice(0, 31);
}

/**
 * Webhook delivery with a persistent retry queue (tx.webhook_queue) in Postgres.
 *
 * Every decision about an application runs under a lock on its tx.app_configs row: the live path
 * waits for it (`FOR UPDATE`), the scheduler skips an application another copy holds
 * (`FOR UPDATE SKIP LOCKED`). So copies share the queue and no batch is ever sent by two at once,
 * and an application's transactions leave in match order: once anything is queued, new matches
 * queue behind it.
 */
export class WebhookDispatcher {
  private readonly batchSize: number;
  private readonly maxBatches: number;
  private readonly log: Logger;
  private readonly clock: Pick<Clock, 'now'>;
  private readonly deliveries: Counter<'path' | 'outcome'>;

  constructor(private readonly deps: DispatcherDeps) {
    this.clock = deps.clock ?? systemClock;
    this.batchSize = deps.batchSize ?? 100;
    this.maxBatches = deps.maxBatchesPerDrain ?? 10;
    this.log = deps.logger.child({ component: 'webhooks' });
    const existing = deps.registry.getSingleMetric('chainpipe_webhook_posts_total');
    this.deliveries = (existing as Counter<'path' | 'outcome'>) ?? new Counter({ name: 'chainpipe_webhook_posts_total', help: 'Webhook POSTs by path (live, retry) and outcome (delivered, failed)', labelNames: ['path', 'outcome'], registers: [deps.registry] });
  }

  private secretOf(cfg: ConfigRow): string | null {
    return cfg.webhook_secret_enc ? this.deps.openSecret(cfg.webhook_secret_enc) : null;
  }

  private async post(cfg: ConfigRow, rows: Array<{ messageId: string; payload: unknown }>, path: 'live' | 'retry'): Promise<SendResult> {
    const body = JSON.stringify(rows.map((r) => r.payload));
    const headers = webhookHeaders(batchId(rows.map((r) => r.messageId)), Math.floor(this.clock.now() / 1000), body, this.secretOf(cfg));
    let result: SendResult;
    try {
      result = await this.deps.send(cfg.webhook_url!, body, headers);
    } catch (err) {
      result = { ok: false, error: errorMessage(err) };
    }
    this.deliveries.inc({ path, outcome: result.ok ? 'delivered' : 'failed' });
    return result;
  }

  /**
   * Delivers the webhook side of tx.push.v1 records (in their order). Resolves once each push is
   * delivered, queued, or known to be unwanted: the consumer commits after.
   */
  async handlePushes(pushes: readonly TxPushMessage[]): Promise<void> {
    const byApp = new Map<string, TxPushMessage[]>();
    for (const p of pushes) {
      // An orphaned transaction has left the chain: a webhook receiver has no field to tell it so.
      if (!p.webhook || p.orphaned) continue;
      const list = byApp.get(p.app_id) ?? [];
      list.push(p);
      byApp.set(p.app_id, list);
    }
    for (const [appId, list] of byApp) await this.deliverLive(appId, list);
  }

  private async deliverLive(appId: string, pushes: TxPushMessage[]): Promise<void> {
    await this.deps.db.transaction(async (trx) => {
      const cfg = (await trx('tx.app_configs').where({ app_id: appId }).forUpdate().first(CONFIG_COLUMNS)) as ConfigRow | undefined;
      // Switched off since the match, or disabled after 36 h of failures: nothing is queued.
      if (!cfg || !cfg.enable_webhook || !cfg.is_active || !cfg.webhook_url || cfg.webhook_delivery_status === 'disabled') return;
      const queued = await trx('tx.webhook_queue').where({ app_id: appId }).first(trx.raw('min(next_attempt_at) as next'), trx.raw('count(*) as n'));
      const now = this.clock.now();
      if (Number(queued?.n ?? 0) > 0 || cfg.webhook_delivery_status === 'retrying') {
        await this.enqueue(trx, appId, pushes, now, queued?.next ? Number(queued.next) : now, 0, null);
        return;
      }
      for (let i = 0; i < pushes.length; i++) {
        const p = pushes[i];
        const result = await this.post(cfg, [{ messageId: p.message_id, payload: toTransactionResult(p.tx) }], 'live');
        if (result.ok) continue;
        // First failure: this push and everything after it wait in the queue, in order.
        const error = result.error;
        await this.enqueue(trx, appId, pushes.slice(i), now, now + retryDelayMs(1), 1, error);
        await trx('tx.app_configs')
          .where({ app_id: appId })
          .update({ webhook_delivery_status: 'retrying', webhook_retrying_since: Math.floor(now / 1000), webhook_last_failure_reason: error.slice(0, 500), updated_at: new Date(now) });
        this.log.warn({ msg: 'webhook_failed_queued', appId, queued: pushes.length - i, error });
        return;
      }
    });
  }

  private async enqueue(trx: Knex.Transaction, appId: string, pushes: TxPushMessage[], firstFailedAt: number, nextAttemptAt: number, attempts: number, error: string | null): Promise<void> {
    if (pushes.length === 0) return;
    await trx('tx.webhook_queue')
      .insert(
        pushes.map((p) => ({
          app_id: appId,
          tx_id: p.tx_id,
          tx_status: p.tx.tx_status ?? '',
          message_id: p.message_id,
          payload: JSON.stringify(toTransactionResult(p.tx)),
          attempts,
          first_failed_at: firstFailedAt,
          next_attempt_at: nextAttemptAt,
          last_error: error,
        })),
      )
      .onConflict(['app_id', 'tx_id', 'tx_status'])
      .ignore();
  }

  /** Applications with queued batches due now, and disabled ones whose webhook was switched on again. */
  async dueApps(limit = 100): Promise<string[]> {
    const now = this.clock.now();
    const { rows } = (await this.deps.db.raw(
      `select app_id from (select distinct app_id from tx.webhook_queue where next_attempt_at <= ?) q
       union
       select app_id from tx.app_configs where webhook_delivery_status = 'disabled' and enable_webhook and is_active
       limit ?`,
      [now, limit],
    )) as { rows: Array<{ app_id: string }> };
    return rows.map((r) => r.app_id);
  }

  /** One scheduler pass: drains every due application another copy is not busy with. */
  async drainDue(): Promise<number> {
    let delivered = 0;
    for (const appId of await this.dueApps()) {
      const report = await this.drainApp(appId, false);
      delivered += report?.delivered ?? 0;
    }
    return delivered;
  }

  /**
   * Sends the application's queue head, in order, up to `batchSize` transactions per POST, until
   * it is empty, a POST fails, or the batch budget is spent. `force` (the manual retry) ignores
   * the schedule. Undefined when another copy holds the application.
   */
  async drainApp(appId: string, force: boolean): Promise<RetryReport | undefined> {
    return this.deps.db.transaction(async (trx) => {
      const cfg = (await trx('tx.app_configs').where({ app_id: appId }).forUpdate().skipLocked().first(CONFIG_COLUMNS)) as ConfigRow | undefined;
      const report: RetryReport = { attempted: 0, delivered: 0, failed: 0, finalFailed: false, nextRetryAt: null, pending: 0 };
      if (!cfg) {
        const exists = await trx('tx.app_configs').where({ app_id: appId }).first('app_id');
        if (exists) return undefined; // locked by another copy
        return this.summarize(trx, appId, report);
      }
      if (!cfg.enable_webhook || !cfg.is_active || !cfg.webhook_url) return this.summarize(trx, appId, report);
      let now = this.clock.now();
      if (cfg.webhook_delivery_status === 'disabled') {
        // Switched on again: delivery resumes with what is queued, the 36 h counting afresh.
        await trx('tx.webhook_queue').where({ app_id: appId }).update({ attempts: 0, first_failed_at: now, next_attempt_at: now });
        await trx('tx.app_configs').where({ app_id: appId }).update({ webhook_delivery_status: 'active', webhook_retrying_since: null, updated_at: new Date(now) });
        cfg.webhook_delivery_status = 'active';
        this.log.info({ msg: 'webhook_resumed', appId });
      }
      for (let b = 0; b < this.maxBatches; b++) {
        const rows = (await trx('tx.webhook_queue').where({ app_id: appId }).orderBy('id').limit(this.batchSize)) as QueueRow[];
        if (rows.length === 0) break;
        now = this.clock.now();
        if (!force && Number(rows[0].next_attempt_at) > now) break;
        report.attempted += rows.length;
        const result = await this.post(cfg, rows.map((r) => ({ messageId: r.message_id ?? `tx${r.tx_id}`, payload: r.payload })), 'retry');
        if (result.ok) {
          await trx('tx.webhook_queue').whereIn('id', rows.map((r) => r.id)).del();
          report.delivered += rows.length;
          continue;
        }
        report.failed += rows.length;
        const firstFailedAt = Math.min(...(await trx('tx.webhook_queue').where({ app_id: appId }).select('first_failed_at')).map((r: { first_failed_at: string }) => Number(r.first_failed_at)));
        const reason = result.error.slice(0, 500);
        if (givenUp(firstFailedAt, now)) {
          await trx('tx.app_configs').where({ app_id: appId }).update({
            webhook_delivery_status: 'disabled',
            enable_webhook: false,
            webhook_last_failed_transaction_id: rows[0].tx_id,
            webhook_last_failure_reason: reason,
            updated_at: new Date(now),
          });
          await trx('tx.webhook_queue').where({ app_id: appId }).update({ last_error: reason });
          report.finalFailed = true;
          this.log.warn({ msg: 'webhook_disabled', appId, txId: rows[0].tx_id, reason });
        } else {
          const attempts = rows[0].attempts + 1;
          await trx('tx.webhook_queue')
            .where({ app_id: appId })
            .update({ attempts: trx.raw('attempts + 1'), next_attempt_at: now + retryDelayMs(attempts), last_error: reason });
          await trx('tx.app_configs')
            .where({ app_id: appId })
            .update({
              webhook_delivery_status: 'retrying',
              webhook_retrying_since: cfg.webhook_retrying_since ?? Math.floor(now / 1000),
              webhook_last_failure_reason: reason,
              updated_at: new Date(now),
            });
        }
        return this.summarize(trx, appId, report);
      }
      const left = await trx('tx.webhook_queue').where({ app_id: appId }).first('id');
      if (!left && cfg.webhook_delivery_status !== 'active') {
        // The queue is empty after a successful delivery: back to active (DECISIONS.md).
        await trx('tx.app_configs').where({ app_id: appId }).update({ webhook_delivery_status: 'active', webhook_retrying_since: null, updated_at: new Date(now) });
        this.log.info({ msg: 'webhook_active_again', appId });
      }
      return this.summarize(trx, appId, report);
    });
  }

  private async summarize(trx: Knex.Transaction, appId: string, report: RetryReport): Promise<RetryReport> {
    const row = await trx('tx.webhook_queue').where({ app_id: appId }).first(trx.raw('count(*) as n'), trx.raw('min(next_attempt_at) as next'));
    report.pending = Number(row?.n ?? 0);
    report.nextRetryAt = row?.next == null ? null : Math.floor(Number(row.next) / 1000);
    return report;
  }
}

/**
 * A dispatcher that POSTs with `postWebhook` and opens stored secrets with the deployment's key:
 * the one wiring of webhook-dispatcher and of tx-gateway's manual retry, so both deliver alike.
 */
export function createWebhookDispatcher(opts: Omit<DispatcherDeps, 'send' | 'openSecret'> & { sender: SenderOptions; secretBox: { open(sealed: string): string } }): WebhookDispatcher {
  const { sender, secretBox, ...deps } = opts;
  return new WebhookDispatcher({
    ...deps,
    send: (url, body, headers) => postWebhook(url, body, headers, sender),
    openSecret: (sealed) => secretBox.open(sealed),
  });
}
