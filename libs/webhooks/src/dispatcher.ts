import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Counter, type Registry } from 'prom-client';
import type { HttpTxWebhookRetry, TxPushMessage, WebhookTxTransactionBatch } from '@chainpipe/contracts';
import { StatementCache, type Knex } from '@chainpipe/db';
import { eachBounded, errorMessage, systemClock, type Clock, type Logger } from '@chainpipe/runtime';
import { toTransactionResult } from '@chainpipe/tx-records';
import { AppConfigRepository, compactDbError, type WebhookAttempt } from '@chainpipe/tx-store';
import { failedBatch, retryDelayMs } from './schedule';
import { postWebhook, type SendResult, type SenderOptions } from './sender';
import { webhookHeaders } from './sign';
import { DeliveryLocks } from './delivery-lock';
import { deliverable, resumeWebhookQueue } from './queue-state';

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
  /** Transactions per POST, live and retried (spec: up to 100). */
  batchSize?: number;
  /** Batches one drain of an application sends at most before it yields to the others. */
  maxBatchesPerDrain?: number;
  /** Applications POSTed to at the same time (live path and scheduler pass each). */
  concurrency?: number;
  /** How long the live path keeps a batch's locks for the next batch (default LIVE_HOLD_MS). */
  liveHoldMs?: number;
  /**
   * How long a consumer call waits for any one POST, and a scheduler pass for its drains
   * (default CALL_WAIT_MS): an application whose receiver has not answered by then goes on in the
   * background, its transactions kept in the queue, and the call or pass moves on to the others.
   */
  callWaitMs?: number;
}

/** The nested `data.data` of POST /tx/api/v1/app/webhook/retry: the schema's (`http/tx/webhook-retry`). */
export type RetryReport = HttpTxWebhookRetry['data'];

export interface DrainOptions {
  /** The manual retry: send the queue head now, whatever the schedule says. */
  force?: boolean;
  /**
   * Answer by then (ms from the call) with what was done; a POST still running goes on, its
   * outcome is recorded when it ends, and the scheduler sends the rest.
   */
  deadlineMs?: number;
}

interface ConfigRow {
  app_id: string;
  enable_webhook: boolean;
  webhook_url: string | null;
  webhook_secret_enc: string | null;
  webhook_delivery_status: string;
  webhook_retrying_since: string | null;
  webhook_next_attempt_at: string | null;
  is_active: boolean;
}

interface QueueRow {
  id: string;
  tx_id: string;
  message_id: string | null;
  /** One transaction of a POST body, as `enqueue` stored it. */
  payload: WebhookTxTransactionBatch[number];
  attempts: number;
  /** Unix ms of the failure of the first POST that carried it; null while none did. */
  first_failed_at: string | null;
  /** The `webhook-id` of the POST that carried it; null while none did. */
  batch_id: string | null;
}

/** One POST as the attempts log keeps it. */
type Attempt = WebhookAttempt;

const CONFIG_COLUMNS = 'app_id, enable_webhook, webhook_url, webhook_secret_enc, webhook_delivery_status, webhook_retrying_since, webhook_next_attempt_at, is_active';

/**
 * How long the live path keeps the locks of a batch that only delivered for the next batch: the
 * consumer hands the next one over after an offset commit, well within this when records wait.
 */
const LIVE_HOLD_MS = 100;

/**
 * Attempts log rows of delivered live batches waiting for their insert, at most, before a batch
 * waits for it: several calls' worth (a call delivers for up to WEBHOOK_MAX_RECORDS_PER_CALL
 * applications), so a steady stream never waits for the log.
 */
const MAX_PENDING_ATTEMPTS = 10_000;

/**
 * How long delivered live attempts wait to share one insert: a steady stream of consumer batches
 * then writes the log in a statement (and a commit) every ATTEMPTS_FLUSH_MS, not one per batch.
 */
const ATTEMPTS_FLUSH_MS = 100;

/**
 * The attempts log's insert of many rows: one array per column, so the statement's text is the
 * same for any number of rows (prepared once; no per-row placeholders to build and number).
 */
const ATTEMPTS_INSERT = `insert into tx.webhook_attempts (app_id, attempted_at, path, transactions, delivered, status_code, error, latency_ms, next_retry_at, webhook_id, tx_ids)
  select a, t, p, n, d, s, e, l, r, w, string_to_array(h, ',')::bigint[]
    from unnest($1::text[], $2::bigint[], $3::text[], $4::int[], $5::bool[], $6::int[], $7::text[], $8::int[], $9::bigint[], $10::text[], $11::text[]) as x(a, t, p, n, d, s, e, l, r, w, h)`;

/**
 * How long a consumer call waits for a POST, or a scheduler pass for its drains, before it lets
 * the receiver answer in the background: a slower receiver delays another application by no
 * more than this.
 */
const CALL_WAIT_MS = 500;

/** What a live batch left: whether it queued anything, and the applications it holds the lock of. */
interface LiveOutcome {
  queued: boolean;
  locked: string[];
}

/** One application's POSTs of a live call, in order; `next` is the batch in flight or the next one. */
interface LiveRun {
  cfg: ConfigRow;
  batches: Array<{ pushes: TxPushMessage[]; batch: Batch }>;
  next: number;
  attempts: Attempt[];
  /** The failed POST, when one failed: it and every batch after it are queued. */
  failed?: Attempt;
  finished: boolean;
  /** Called once it finished (set by `detach`). */
  onFinished?: () => void;
  /** The call moved on without it: it POSTs no further batch, the batch in flight finishes in the background. */
  detached: boolean;
  /** When it was detached: the batch whose POST was in flight (the first one not done). */
  cut?: number;
}

/**
 * One element of a webhook body: the push's TransactionResult, and `removed: true` when the
 * transaction left the chain (its block was replaced): the receiver undoes what it did for it.
 */
export function webhookItem(push: Pick<TxPushMessage, 'tx' | 'orphaned'>): WebhookTxTransactionBatch[number] {
  const item: WebhookTxTransactionBatch[number] = toTransactionResult(push.tx);
  if (push.orphaned) item.removed = true;
  return item;
}

/**
 * `webhook-id` of a batch: the message id of a single push, else a digest of the batch's ids in
 * order. A queued transaction keeps the id of the POST that carried it (its queue row's
 * `batch_id`), so a retry sends the same content under the same id.
 */
export function batchId(messageIds: readonly string[]): string {
  if (messageIds.length === 1) return messageIds[0];
  return 'b' + createHash('sha256').update(messageIds.join(',')).digest('hex').slice(0, 31);
}

/** One POST's body (a JSON array of TransactionResult), its `webhook-id`, how many transactions it holds and their ids. */
interface Batch {
  body: string;
  id: string;
  size: number;
  txIds: string[];
}

function toBatch(items: ReadonlyArray<{ messageId: string; txId: string; payload: WebhookTxTransactionBatch[number] }>): Batch {
  const body: WebhookTxTransactionBatch = items.map((i) => i.payload);
  return { body: JSON.stringify(body), id: batchId(items.map((i) => i.messageId)), size: items.length, txIds: items.map((i) => i.txId) };
}

/** Whether every promise settled within `ms` (they go on either way). */
async function settledWithin(promises: readonly Promise<unknown>[], ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const all = Promise.allSettled(promises).then(() => true);
  const result = await Promise.race([all, new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)))]);
  clearTimeout(timer);
  return result;
}

function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/**
 * Webhook delivery with a persistent retry queue (tx.webhook_queue) in Postgres.
 *
 * An application is delivered for by one copy at a time: the copy holds the application's
 * delivery lock (`DeliveryLocks`, a session advisory lock) while it POSTs, with no transaction
 * open, and records the outcome in short statements after. So one slow receiver holds no row
 * lock, different applications are POSTed side by side (`concurrency`), one application's
 * batches leave in order, and no batch is sent by two copies at once. Once anything is queued,
 * new matches queue behind it.
 */
export class WebhookDispatcher {
  private readonly batchSize: number;
  private readonly maxBatches: number;
  private readonly concurrency: number;
  private readonly callWaitMs: number;
  private readonly log: Logger;
  private readonly clock: Pick<Clock, 'now'>;
  private readonly deliveries: Counter<'path' | 'outcome'>;
  private readonly postCounters: Record<'live' | 'retry', Record<'delivered' | 'failed', Counter.Internal>>;
  /** Secrets opened once per sealed value: opening is an AES-GCM decryption per POST otherwise. */
  private readonly secrets = new Map<string, string>();

  constructor(private readonly deps: DispatcherDeps) {
    this.clock = deps.clock ?? systemClock;
    this.batchSize = deps.batchSize ?? 100;
    this.maxBatches = deps.maxBatchesPerDrain ?? 10;
    this.concurrency = deps.concurrency ?? 16;
    this.callWaitMs = deps.callWaitMs ?? CALL_WAIT_MS;
    this.log = deps.logger.child({ component: 'webhooks' });
    this.statements = new StatementCache(deps.db);
    const existing = deps.registry.getSingleMetric('chainpipe_webhook_posts_total');
    this.deliveries = (existing as Counter<'path' | 'outcome'>) ?? new Counter({ name: 'chainpipe_webhook_posts_total', help: 'Webhook POSTs by path (live, retry) and outcome (delivered, failed)', labelNames: ['path', 'outcome'], registers: [deps.registry] });
    // The four children made once: prom-client hashes a label object on every `inc` otherwise.
    const children = (path: 'live' | 'retry') => ({ delivered: this.deliveries.labels({ path, outcome: 'delivered' }), failed: this.deliveries.labels({ path, outcome: 'failed' }) });
    this.postCounters = { live: children('live'), retry: children('retry') };
  }

  private secretOf(cfg: ConfigRow): string | null {
    const sealed = cfg.webhook_secret_enc;
    if (!sealed) return null;
    let plain = this.secrets.get(sealed);
    if (plain === undefined) {
      if (this.secrets.size >= 10_000) this.secrets.clear();
      plain = this.deps.openSecret(sealed);
      this.secrets.set(sealed, plain);
    }
    return plain;
  }

  /** One POST of `rows` (in order); never throws. `attempt` is what the attempts log keeps. */
  private async post(cfg: ConfigRow, batch: Batch, path: 'live' | 'retry'): Promise<{ result: SendResult; attempt: Attempt }> {
    const attemptedAt = this.clock.now();
    const started = performance.now();
    let result: SendResult;
    try {
      const headers = webhookHeaders(batch.id, Math.floor(attemptedAt / 1000), batch.body, this.secretOf(cfg));
      result = await this.deps.send(cfg.webhook_url!, batch.body, headers);
    } catch (err) {
      result = { ok: false, error: errorMessage(err) };
    }
    this.postCounters[path][result.ok ? 'delivered' : 'failed'].inc();
    const attempt: Attempt = {
      app_id: cfg.app_id,
      attempted_at: attemptedAt,
      path,
      webhook_id: batch.id,
      tx_ids: batch.txIds,
      transactions: batch.size,
      delivered: result.ok,
      status_code: result.status ?? null,
      error: result.ok ? null : result.error.slice(0, 500),
      latency_ms: Math.round(performance.now() - started),
      next_retry_at: null,
    };
    return { result, attempt };
  }

  /**
   * Delivers the webhook side of tx.push.v1 records (in their order). Resolves once each push is
   * delivered, queued, or known to be unwanted: the consumer commits after.
   */
  async handlePushes(pushes: readonly TxPushMessage[], heartbeat?: () => Promise<void>): Promise<void> {
    const byApp = new Map<string, TxPushMessage[]>();
    for (const p of pushes) {
      // An orphaned transaction is sent too, marked `removed` (webhookItem).
      if (!p.webhook) continue;
      const list = byApp.get(p.app_id) ?? [];
      list.push(p);
      byApp.set(p.app_id, list);
    }
    if (byApp.size === 0) return;
    clearTimeout(this.idleRelease);
    this.idleRelease = undefined;
    const delivered: Attempt[] = [];
    let outcome: LiveOutcome = { queued: true, locked: [] };
    this.liveRunning = true;
    try {
      const locks = await this.liveSession();
      try {
        outcome = await this.deliverLive(locks, byApp, delivered);
      } finally {
        if (outcome.queued) {
          // A batch that queued anything lets its applications go before it returns, so the
          // scheduler's next pass finds them free (all but those still POSTing in the background).
          this.held = new Set();
          await this.releaseLive(locks);
        } else {
          this.keepLive(locks, outcome.locked);
        }
      }
    } finally {
      this.liveRunning = false;
    }
    await this.logAttempts(delivered);
    // A call waits `callWaitMs` at most for any POST, so it stays well within the session
    // timeout; the heartbeat tells the group so right away.
    await heartbeat?.();
  }

  /**
   * Applications whose live POST runs on past its call (a slow receiver), by application: the
   * live session holds their locks until it ends and its outcome is recorded. Their transactions
   * from the batch in flight on are in the queue, so later matches queue behind them.
   */
  private readonly detached = new Map<string, Promise<void>>();
  /** Every application whose lock the live session holds (batches, `held`, `detached`). */
  private liveHolding = new Set<string>();

  /**
   * The live path's lock session: one pinned connection kept from batch to batch (the consumer
   * hands batches over one at a time), so a batch pays one round trip for its locks instead of
   * a connection checkout, the take and an unlock it waits for.
   */
  private liveLocks: Promise<DeliveryLocks> | undefined;

  /**
   * Applications whose lock the live session still holds after a batch that only delivered:
   * the next batch finds them taken already, so a steady stream pays no unlock between batches.
   * They are let go once no batch came for `liveHoldMs`, or when a batch without them comes,
   * or queues anything. Holding them changes nothing for them: nothing of theirs is queued, and
   * a copy that meets the lock queues behind it (the next batch then sees the queue and lets go).
   */
  private held = new Set<string>();
  private idleRelease: NodeJS.Timeout | undefined;
  /** A live batch is running: what the session holds is in use. */
  private liveRunning = false;

  /** After a batch that only delivered: keeps `locked` held, lets go of the rest, arms the idle release. */
  private keepLive(locks: DeliveryLocks, locked: readonly string[]): void {
    const keep = new Set(locked);
    const stale = [...this.held].filter((a) => !keep.has(a));
    this.held = keep;
    for (const a of stale) this.liveHolding.delete(a);
    // Queued on the session ahead of the next batch's take; a failure resets the session.
    if (stale.length) locks.release(stale).catch((err: unknown) => this.resetLive(locks, err));
    if (keep.size === 0) return;
    this.idleRelease = setTimeout(() => {
      this.idleRelease = undefined;
      this.held = new Set();
      void this.releaseLive(locks);
    }, this.deps.liveHoldMs ?? LIVE_HOLD_MS);
    this.idleRelease.unref();
  }

  private liveSession(): Promise<DeliveryLocks> {
    if (!this.liveLocks) {
      const opening = DeliveryLocks.open(this.deps.db);
      this.liveLocks = opening;
      opening.then(
        (locks) => {
          if (this.liveLocks === opening) this.liveNow = locks;
        },
        () => {
          if (this.liveLocks === opening) this.liveLocks = undefined;
        },
      );
    }
    return this.liveLocks;
  }

  /** The open live session, once `liveLocks` resolved. */
  private liveNow: DeliveryLocks | undefined;

  /**
   * Lets the batch's applications go without waiting: the unlock is queued on the session's
   * connection ahead of the next batch's take, so that take never meets this batch's locks, and
   * the delivery is done before the consumer commits. A failed unlock ends the connection (its
   * locks go with it) and the next batch opens a new session.
   */
  private releaseLive(locks: DeliveryLocks): Promise<void> {
    if (this.detached.size === 0) {
      this.liveHolding = new Set();
      return locks.releaseAll().catch((err: unknown) => this.resetLive(locks, err));
    }
    // POSTs running on in the background keep their applications' locks.
    const apps = [...this.liveHolding].filter((a) => !this.detached.has(a));
    this.liveHolding = new Set(this.detached.keys());
    return locks.release(apps).catch((err: unknown) => this.resetLive(locks, err));
  }

  /** The session failed: ended (its locks go with it); the next batch opens a new one. */
  private resetLive(locks: DeliveryLocks, err: unknown): void {
    this.log.warn({ msg: 'webhook_live_locks_reset', err: errorMessage(err) });
    if (this.liveNow === locks) {
      this.liveLocks = undefined;
      this.liveNow = undefined;
      this.held = new Set();
      this.liveHolding = new Set();
    }
    locks.close().catch(() => undefined);
  }

  /**
   * Lets go at once of what the live session holds between batches (the scheduler and the manual
   * retry of this process are about to take locks). Not while a live batch runs: it uses them.
   */
  private async releaseHeld(): Promise<void> {
    if (this.liveRunning || this.held.size === 0 || !this.liveLocks) return;
    clearTimeout(this.idleRelease);
    this.idleRelease = undefined;
    this.held = new Set();
    await this.releaseLive(await this.liveLocks);
  }

  /** Ends the live path's lock session and waits for the attempts log (shutdown, after the consumer stopped). */
  async close(): Promise<void> {
    clearTimeout(this.idleRelease);
    this.idleRelease = undefined;
    // POSTs running on in the background end within the sender's timeouts and record their outcome.
    while (this.detached.size || this.draining.size) await Promise.allSettled([...this.detached.values(), ...this.draining.values()]);
    const scheduler = this.schedulerLocks;
    this.schedulerLocks = undefined;
    if (scheduler) await (await scheduler.catch(() => undefined))?.close().catch(() => undefined);
    this.held = new Set();
    const live = this.liveLocks;
    this.liveLocks = undefined;
    this.liveNow = undefined;
    if (live) await (await live.catch(() => undefined))?.close().catch(() => undefined);
    await this.flushAttempts();
  }

  /** The attempts log's write in flight (of delivered live POSTs): at most one at a time. */
  private attemptsWrite: Promise<void> | undefined;
  /** Attempts of delivered live batches not written yet: the next write takes them all. */
  private pendingAttempts: Attempt[] = [];
  /** Ends the wait of the write in flight before its insert (shutdown, or too many rows waiting). */
  private flushNow: (() => void) | undefined;
  private readonly statements: StatementCache;

  /**
   * Writes attempts that changed nothing else in the background: a delivered live batch answers
   * without waiting for its log rows (they are a record, not delivery state; a crash can lose the
   * last ATTEMPTS_FLUSH_MS of them). One write at a time waits ATTEMPTS_FLUSH_MS and takes every
   * row waiting by then, so a batch never waits for an insert and its commit; only past
   * MAX_PENDING_ATTEMPTS rows waiting does a batch wait for the write, so they never pile up.
   */
  private async logAttempts(attempts: Attempt[]): Promise<void> {
    if (attempts.length === 0) return;
    this.pendingAttempts.push(...attempts);
    this.attemptsWrite ??= this.writeAttempts();
    if (this.pendingAttempts.length >= MAX_PENDING_ATTEMPTS) {
      this.flushNow?.();
      await this.attemptsWrite;
    }
  }

  /** After the flush wait, inserts what waits, again until nothing does. */
  private async writeAttempts(): Promise<void> {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ATTEMPTS_FLUSH_MS);
      this.flushNow = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    this.flushNow = undefined;
    while (this.pendingAttempts.length) {
      const rows = this.pendingAttempts;
      this.pendingAttempts = [];
      const column = <K extends keyof Attempt>(k: K) => rows.map((r) => r[k]);
      await this.statements
        .nativeRows(ATTEMPTS_INSERT, [column('app_id'), column('attempted_at'), column('path'), column('transactions'), column('delivered'), column('status_code'), column('error'), column('latency_ms'), column('next_retry_at'), column('webhook_id'), rows.map((r) => r.tx_ids.join(','))])
        .catch((err: unknown) => this.log.warn({ msg: 'webhook_attempts_log_failed', attempts: rows.length, err: compactDbError(err) }));
    }
    this.attemptsWrite = undefined;
  }

  /** Writes the attempts log's waiting rows now and waits for them (shutdown, tests). */
  async flushAttempts(): Promise<void> {
    this.flushNow?.();
    await this.attemptsWrite;
  }

  /**
   * `delivered` receives the attempts of a call that only delivered: logged in the background.
   * `queued`: anything went to the queue; `locked`: the applications whose lock the session holds.
   * The call waits `callWaitMs` at most for any one POST: an application whose receiver is
   * slower goes on in the background (`detach`) and frees its lane for the next application, so
   * it delays no other one by more than that.
   */
  private async deliverLive(locks: DeliveryLocks, byApp: Map<string, TxPushMessage[]>, delivered: Attempt[]): Promise<LiveOutcome> {
    const db = this.deps.db;
    // Applications without a configuration row have nothing to deliver to. Those the session
    // holds already (kept from the batch before, or POSTing in the background) are not taken again.
    const taking = locks.take<ConfigRow>([...byApp.keys()], CONFIG_COLUMNS, [...this.held, ...this.detached.keys()]);
    taking.catch(() => undefined); // awaited below; a failure must not count as unhandled meanwhile
    // The bodies are built while Postgres answers (`take` writes its statement to the socket at once).
    // One payload per push, for the POST body or, when the push is queued instead, its queue row.
    const payloadOf = new Map([...byApp.values()].flat().map((p) => [p, webhookItem(p)]));
    const bodies = new Map([...byApp].map(([appId, list]) => [appId, chunks(list, this.batchSize).map((part) => ({ pushes: part, batch: toBatch(part.map((p) => ({ messageId: p.message_id, txId: p.tx_id, payload: payloadOf.get(p)! }))) }))]));
    const configs = await taking;
    for (const c of configs) if (c.locked) this.liveHolding.add(c.app_id);
    const queueBehind: Array<{ appId: string; pushes: TxPushMessage[] }> = [];
    const runs: LiveRun[] = [];
    for (const cfg of configs) {
      const list = byApp.get(cfg.app_id)!;
      // Switched off since the match, or disabled after 36 h of failures: nothing is queued.
      if (!deliverable(cfg)) continue;
      // Queued batches first (also those of an application switched on again after a disable, or
      // POSTing in the background), and behind whatever another copy is sending for it right now.
      if (!cfg.locked || cfg.queued || cfg.webhook_delivery_status !== 'active' || this.detached.has(cfg.app_id)) queueBehind.push({ appId: cfg.app_id, pushes: list });
      else runs.push({ cfg, batches: bodies.get(cfg.app_id)!, next: 0, attempts: [], finished: false, detached: false });
    }
    await eachBounded(runs, this.concurrency, async (run) => {
      for (; run.next < run.batches.length; run.next++) {
        const posting = this.post(run.cfg, run.batches[run.next].batch, 'live');
        if (!(await settledWithin([posting], this.callWaitMs))) {
          // Slower than the wait: it answers in the background and the lane goes on with the
          // next application. Where it stood is taken now: the POST may end while the call
          // writes its queue rows.
          run.detached = true;
          run.cut = run.next;
          void posting.then(({ attempt }) => {
            run.attempts.push(attempt);
            run.finished = true;
            run.onFinished?.();
          });
          return;
        }
        const { result, attempt } = await posting;
        run.attempts.push(attempt);
        if (!result.ok) {
          run.failed = attempt;
          break;
        }
      }
      run.finished = true;
    });

    const now = this.clock.now();
    const slow = runs.filter((r) => r.detached);
    // A detached run's POST in flight is logged when it ends (`detach`), not with the call.
    const attempts = runs.flatMap((r) => (r.detached ? r.attempts.slice(0, r.cut) : r.attempts));
    const failures = runs.filter((r) => !r.detached && r.failed);
    if (queueBehind.length === 0 && failures.length === 0 && slow.length === 0) {
      delivered.push(...attempts);
      return { queued: false, locked: configs.filter((c) => c.locked).map((c) => c.app_id) };
    }
    // The slow ones stopped at the batch in flight; it and every batch after it are queued
    // (nothing failed: no attempt counted), so a crash loses none of them and later matches queue behind.
    await db.transaction(async (trx) => {
      for (const q of queueBehind) await this.enqueue(trx, q.appId, q.pushes, payloadOf, null);
      for (const run of slow) {
        const from = run.cut!;
        // The batch in flight keeps its webhook-id: a retry sends it as it went.
        await this.enqueue(trx, run.cfg.app_id, run.batches[from].pushes, payloadOf, null, run.batches[from].batch.id);
        await this.enqueue(trx, run.cfg.app_id, run.batches.slice(from + 1).flatMap((b) => b.pushes), payloadOf, null);
      }
      const due = [...queueBehind.map((q) => q.appId), ...slow.map((r) => r.cfg.app_id)];
      if (due.length) {
        // Due at once unless a retry is already scheduled: the scheduler takes it from there
        // (an application POSTing in the background once that POST ended and let it go).
        await trx('tx.app_configs')
          .whereIn('app_id', due)
          .update({ webhook_next_attempt_at: trx.raw('coalesce(webhook_next_attempt_at, ?)', [now]) });
      }
      for (const f of failures) {
        // First failure: this batch and everything after it wait in the queue, in order.
        const error = f.failed!.error!;
        f.failed!.next_retry_at = f.failed!.attempted_at + retryDelayMs(1);
        // The failed POST's transactions start their clocks; the batches after it were not sent.
        await this.enqueue(trx, f.cfg.app_id, f.batches[f.next].pushes, payloadOf, { at: now, error }, f.batches[f.next].batch.id);
        await this.enqueue(trx, f.cfg.app_id, f.batches.slice(f.next + 1).flatMap((b) => b.pushes), payloadOf, null);
        await this.markFailed(trx, f.cfg.app_id, error, now);
      }
      if (attempts.length) await trx('tx.webhook_attempts').insert(attempts);
    });
    for (const run of slow) this.detach(run);
    return { queued: true, locked: [] };
  }

  /** The live POST's first failure: the application retries from the queue (spec: `retrying`). */
  private async markFailed(trx: Knex.Transaction, appId: string, error: string, now: number): Promise<void> {
    await trx('tx.app_configs')
      .where({ app_id: appId })
      .update({
        webhook_delivery_status: 'retrying',
        webhook_retrying_since: trx.raw('coalesce(webhook_retrying_since, ?)', [Math.floor(now / 1000)]),
        webhook_last_failure_reason: error,
        webhook_next_attempt_at: now + retryDelayMs(1),
        updated_at: new Date(now),
      });
    this.log.warn({ msg: 'webhook_failed_queued', appId, error });
  }

  /**
   * A live run the call moved on from: once its POST in flight ends, records the outcome (the
   * batch's queue rows dropped when delivered; counted as the batch's first failure otherwise),
   * then lets the application go; the scheduler sends what is left.
   */
  private detach(run: LiveRun): void {
    const appId = run.cfg.app_id;
    const from = run.cut!;
    const finishing = (async () => {
      if (!run.finished) await new Promise<void>((resolve) => (run.onFinished = resolve));
      // One attempt per batch, in order: the one of the batch that was in flight.
      const attempt = run.attempts[from];
      const db = this.deps.db;
      const now = this.clock.now();
      const batch = run.batches[from].batch;
      if (attempt.delivered) {
        await db.transaction(async (trx) => {
          await trx('tx.webhook_queue').where({ app_id: appId, batch_id: batch.id }).del();
          const left = await trx('tx.webhook_queue').where({ app_id: appId }).first('id');
          if (!left) await trx('tx.app_configs').where({ app_id: appId, webhook_delivery_status: 'active' }).update({ webhook_next_attempt_at: null });
        });
        await this.logAttempts([attempt]);
        return;
      }
      attempt.next_retry_at = attempt.attempted_at + retryDelayMs(1);
      await db.transaction(async (trx) => {
        // The batch's first failure: its transactions' clocks start; those queued behind keep theirs.
        await trx('tx.webhook_queue').where({ app_id: appId, batch_id: batch.id }).update({ attempts: 1, first_failed_at: now, last_error: attempt.error });
        await this.markFailed(trx, appId, attempt.error!, now);
        await trx('tx.webhook_attempts').insert(attempt);
      });
    })()
      .catch((err: unknown) => this.log.error({ msg: 'webhook_background_post_failed', appId, err: errorMessage(err) }))
      .finally(() => {
        this.detached.delete(appId);
        this.liveHolding.delete(appId);
        const locks = this.liveNow;
        locks?.release([appId]).catch((err: unknown) => this.resetLive(locks, err));
      });
    this.detached.set(appId, finishing);
  }

  private async enqueue(
    trx: Knex.Transaction,
    appId: string,
    pushes: TxPushMessage[],
    payloadOf: ReadonlyMap<TxPushMessage, WebhookTxTransactionBatch[number]>,
    /** The failed POST that carried them; null for transactions queued behind, not sent. */
    failure: { at: number; error: string } | null,
    /** The `webhook-id` of the POST that carried them (null: none did), so a retry sends them as it did. */
    batchId: string | null = null,
  ): Promise<void> {
    if (pushes.length === 0) return;
    await trx('tx.webhook_queue')
      .insert(
        pushes.map((p) => ({
          app_id: appId,
          tx_id: p.tx_id,
          tx_status: p.tx.tx_status ?? '',
          message_id: p.message_id,
          batch_id: batchId,
          payload: JSON.stringify(payloadOf.get(p)),
          attempts: failure ? 1 : 0,
          first_failed_at: failure?.at ?? null,
          last_error: failure?.error ?? null,
        })),
      )
      .onConflict(['app_id', 'tx_id', 'tx_status'])
      .ignore();
  }

  /**
   * Applications whose queue is due, most overdue first. Parked
   * queues (webhook off or disabled, configuration inactive or deleted) are never picked: the
   * configuration API clears their due time, and a switch flipped in the table directly is
   * filtered here; `app_configs_webhook_due_idx` serves the order.
   */
  async dueApps(limit = 100): Promise<string[]> {
    const now = this.clock.now();
    const { rows } = (await this.deps.db.raw(
      `select app_id from tx.app_configs
        where webhook_next_attempt_at <= ? and enable_webhook and is_active and webhook_url is not null
        order by webhook_next_attempt_at limit ?`,
      [now, limit],
    )) as { rows: Array<{ app_id: string }> };
    return rows.map((r) => r.app_id);
  }

  /** Applications the scheduler of this process is draining, by application (their drains). */
  private readonly draining = new Map<string, Promise<void>>();
  /** The scheduler's lock session: one pinned connection kept from pass to pass. */
  private schedulerLocks: Promise<DeliveryLocks> | undefined;

  private schedulerSession(): Promise<DeliveryLocks> {
    if (!this.schedulerLocks) {
      const opening = DeliveryLocks.open(this.deps.db);
      this.schedulerLocks = opening;
      opening.catch(() => {
        if (this.schedulerLocks === opening) this.schedulerLocks = undefined;
      });
    }
    return this.schedulerLocks;
  }

  /**
   * One scheduler pass: drains the due applications, at most `concurrency` at a time, skipping
   * those another copy is delivering for. It waits `callWaitMs` at most: a drain still running
   * then (a slow receiver) goes on in the background, holding its application's lock, and the
   * next pass takes the other due applications without waiting for it. Resolves with the
   * transactions the drains delivered by then.
   */
  async drainDue(): Promise<number> {
    const started = performance.now();
    let delivered = 0;
    const running: Promise<void>[] = [];
    for (;;) {
      const room = this.concurrency - this.draining.size;
      if (room <= 0) break;
      // Those draining here or POSTing in the background (their locks are held here) are skipped.
      const due = (await this.dueApps(room + this.draining.size + this.detached.size)).filter((a) => !this.draining.has(a) && !this.detached.has(a)).slice(0, room);
      if (due.length === 0) break;
      await this.releaseHeld();
      const locks = await this.schedulerSession();
      let configs: Array<ConfigRow & { locked: boolean }>;
      try {
        configs = (await locks.take<ConfigRow>(due, CONFIG_COLUMNS)).filter((c) => c.locked);
      } catch (err) {
        // The session failed: its locks (of drains still running too) went with it.
        if (this.schedulerLocks) void (await this.schedulerLocks.catch(() => undefined))?.close().catch(() => undefined);
        this.schedulerLocks = undefined;
        throw err;
      }
      for (const cfg of configs) {
        const drain = this.drainLocked(cfg, {})
          .then((report) => void (delivered += report.delivered))
          .catch((err: unknown) => this.log.error({ msg: 'webhook_drain_failed', appId: cfg.app_id, err: errorMessage(err) }))
          .finally(async () => {
            this.draining.delete(cfg.app_id);
            await locks.release([cfg.app_id]).catch((err: unknown) => this.log.warn({ msg: 'webhook_lock_release_failed', appId: cfg.app_id, err: errorMessage(err) }));
          });
        this.draining.set(cfg.app_id, drain);
        running.push(drain);
      }
      // Another round only when every drain so far ended within the wait (more may be due).
      const left = this.callWaitMs - (performance.now() - started);
      if (configs.length === 0 || left <= 0 || !(await settledWithin(running, left))) break;
    }
    await settledWithin(running, Math.max(0, this.callWaitMs - (performance.now() - started)));
    return delivered;
  }

  /**
   * Sends the application's queue head, in order, up to `batchSize` transactions per POST, until
   * it is empty, a POST fails, or the batch budget is spent. Undefined when another copy is
   * delivering for the application.
   */
  async drainApp(appId: string, opts: DrainOptions = {}): Promise<RetryReport | undefined> {
    await this.releaseHeld();
    const locks = await DeliveryLocks.open(this.deps.db);
    let closeLater = false;
    try {
      const [cfg] = await locks.take<ConfigRow>([appId], CONFIG_COLUMNS);
      if (!cfg) return await this.summarize(appId, { attempted: 0, delivered: 0, failed: 0, finalFailed: false, nextRetryAt: null, pending: 0 });
      if (!cfg.locked) return undefined; // another copy is delivering for it
      const run = this.drainLocked(cfg, opts);
      if (opts.deadlineMs === undefined) return await run;
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<undefined>((r) => (timer = setTimeout(() => r(undefined), opts.deadlineMs)));
      const report = await Promise.race([run, deadline]);
      clearTimeout(timer);
      if (report) return report;
      // The deadline came first: answer with what is known; the running POST ends on its own,
      // records its outcome and then lets the application go.
      closeLater = true;
      run
        .catch((err: unknown) => this.log.error({ msg: 'webhook_drain_failed', appId, err: errorMessage(err) }))
        .finally(() => locks.close().catch((err: unknown) => this.log.error({ msg: 'webhook_lock_release_failed', appId, err: errorMessage(err) })));
      const sofar = this.progress.get(appId) ?? { attempted: 0, delivered: 0, failed: 0, finalFailed: false, nextRetryAt: null, pending: 0 };
      return await this.summarize(appId, { ...sofar });
    } finally {
      if (!closeLater) await locks.close();
    }
  }

  /** Reports of drains running now, by application: what a manual retry past its deadline shows. */
  private readonly progress = new Map<string, RetryReport>();

  /** Drains an application whose delivery lock the caller holds. */
  private async drainLocked(cfg: ConfigRow, opts: DrainOptions): Promise<RetryReport> {
    const db = this.deps.db;
    const appId = cfg.app_id;
    const report: RetryReport = { attempted: 0, delivered: 0, failed: 0, finalFailed: false, nextRetryAt: null, pending: 0 };
    if (!deliverable(cfg)) {
      // Nothing can be sent: parked until the configuration makes it deliverable again.
      await db('tx.app_configs').where({ app_id: appId }).update({ webhook_next_attempt_at: null });
      return this.summarize(appId, report);
    }
    const now = this.clock.now();
    if (!opts.force && (cfg.webhook_next_attempt_at === null || Number(cfg.webhook_next_attempt_at) > now)) return this.summarize(appId, report);
    if (cfg.webhook_delivery_status === 'disabled') {
      // Switched on again without the configuration API (which resumes at once): resume here.
      await db.transaction((trx) => resumeWebhookQueue(trx, appId, now));
      cfg.webhook_delivery_status = 'retrying';
      this.log.info({ msg: 'webhook_resumed', appId });
    }
    this.progress.set(appId, report);
    try {
      await this.drainLoop(cfg, report);
    } finally {
      this.progress.delete(appId);
    }
    return report;
  }

  /**
   * The next POST of an application's queue, in order: the transactions of the batch at its head
   * when a POST carried them before (all of them, as that POST did), else up to `batchSize` that
   * no POST carried yet.
   */
  private async queueHead(appId: string): Promise<QueueRow[]> {
    const columns = ['id', 'tx_id', 'message_id', 'payload', 'attempts', 'first_failed_at', 'batch_id'];
    const rows = (await this.deps.db('tx.webhook_queue').where({ app_id: appId }).orderBy('id').limit(this.batchSize).select(columns)) as QueueRow[];
    const head = rows[0]?.batch_id;
    if (head === undefined) return [];
    if (head === null) {
      const end = rows.findIndex((r) => r.batch_id !== null);
      return end === -1 ? rows : rows.slice(0, end);
    }
    // A batch's rows are consecutive unless another copy queued behind at the same moment: read them by id.
    return (await this.deps.db('tx.webhook_queue').where({ app_id: appId, batch_id: head }).orderBy('id').select(columns)) as QueueRow[];
  }

  private async drainLoop(cfg: ConfigRow, report: RetryReport): Promise<void> {
    const db = this.deps.db;
    const appId = cfg.app_id;
    const mine = { app_id: appId };
    for (let b = 0; b < this.maxBatches; b++) {
      const rows = await this.queueHead(appId);
      if (rows.length === 0) {
        // Delivered everything: back to active (docs/decisions.md#d15).
        await db.transaction(async (trx) => {
          const left = await trx('tx.webhook_queue').where({ app_id: appId }).first('id');
          const update: Record<string, unknown> = { webhook_next_attempt_at: left ? this.clock.now() : null };
          if (!left && cfg.webhook_delivery_status !== 'active') {
            Object.assign(update, { webhook_delivery_status: 'active', webhook_retrying_since: null, updated_at: new Date(this.clock.now()) });
            this.log.info({ msg: 'webhook_active_again', appId });
          }
          await trx('tx.app_configs').where(mine).update(update);
        });
        await this.summarize(appId, report);
        return;
      }
      report.attempted += rows.length;
      const batch = toBatch(rows.map((r) => ({ messageId: r.message_id ?? `tx${r.tx_id}`, txId: r.tx_id, payload: r.payload })));
      // Sent as a POST carried them before, under the same id; or, never sent, named now, before
      // the POST, so whatever happens to it the next try sends them as this one does.
      if (rows[0].batch_id !== null) batch.id = rows[0].batch_id;
      else await db('tx.webhook_queue').whereIn('id', rows.map((r) => r.id)).update({ batch_id: batch.id });
      const { result, attempt } = await this.post(cfg, batch, 'retry');
      const now = this.clock.now();
      if (result.ok) {
        await db.transaction(async (trx) => {
          await trx('tx.webhook_queue').whereIn('id', rows.map((r) => r.id)).del();
          await trx('tx.webhook_attempts').insert(attempt);
        });
        report.delivered += rows.length;
        continue;
      }
      report.failed += rows.length;
      const reason = attempt.error!;
      // Each transaction of the POST counts the failure, its 36 h from its own first one; those
      // queued behind keep theirs. The give-up and the next attempt are the batch's.
      const outcome = failedBatch(rows.map((r) => ({ attempts: r.attempts, firstFailedAt: r.first_failed_at === null ? null : Number(r.first_failed_at) })), now);
      await db.transaction(async (trx) => {
        const ids = rows.map((r) => r.id);
        await trx('tx.webhook_queue').whereIn('id', ids).update({ attempts: trx.raw('attempts + 1'), first_failed_at: trx.raw('coalesce(first_failed_at, ?)', [now]), last_error: reason });
        if (outcome.giveUp) {
          await trx('tx.app_configs').where(mine).update({
            webhook_delivery_status: 'disabled',
            enable_webhook: false,
            webhook_last_failed_transaction_id: rows[0].tx_id,
            webhook_last_failure_reason: reason,
            webhook_next_attempt_at: null,
            updated_at: new Date(now),
          });
          report.finalFailed = true;
          this.log.warn({ msg: 'webhook_disabled', appId, txId: rows[0].tx_id, reason });
        } else {
          attempt.next_retry_at = outcome.nextAttemptAt;
          await trx('tx.app_configs')
            .where(mine)
            .update({
              webhook_delivery_status: 'retrying',
              webhook_retrying_since: cfg.webhook_retrying_since ?? Math.floor(now / 1000),
              webhook_last_failure_reason: reason,
              webhook_next_attempt_at: attempt.next_retry_at,
              updated_at: new Date(now),
            });
        }
        await trx('tx.webhook_attempts').insert(attempt);
      });
      await this.summarize(appId, report);
      return;
    }
    // The batch budget is spent: the rest is due at once, for whichever copy comes next.
    await db('tx.app_configs').where(mine).update({ webhook_next_attempt_at: this.clock.now() });
    await this.summarize(appId, report);
  }

  private async summarize(appId: string, report: RetryReport): Promise<RetryReport> {
    const queue = await new AppConfigRepository(this.deps.db).queueSummary(appId);
    report.pending = queue.pending;
    report.nextRetryAt = queue.nextAttemptAtMs === null ? null : Math.floor(queue.nextAttemptAtMs / 1000);
    return report;
  }


  /**
   * Drops attempts log entries older than `maxAgeMs` (a periodic job), `chunk` rows per statement
   * so no delete runs long, until none is left or `maxChunks` ran (the next pass goes on).
   */
  async pruneAttempts(maxAgeMs: number, chunk = 10_000, maxChunks = 50): Promise<number> {
    const db = this.deps.db;
    const cutoff = this.clock.now() - maxAgeMs;
    let deleted = 0;
    for (let i = 0; i < maxChunks; i++) {
      const n = await db('tx.webhook_attempts')
        .whereIn('id', db('tx.webhook_attempts').where('attempted_at', '<', cutoff).orderBy('attempted_at').limit(chunk).select('id'))
        .del();
      deleted += n;
      if (n < chunk) break;
    }
    return deleted;
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
