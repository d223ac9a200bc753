import type { Knex } from '@chainpipe/db';
import type { Clock, Logger, SecretBox } from '@chainpipe/runtime';
import { AppConfigRepository, type WebhookAttemptFilter } from '@chainpipe/tx-store';
import { resumeWebhookQueue, storedTarget, targetChanged, type RetryReport } from '@chainpipe/webhooks';
import {
  attemptsView, configView, insertValues, planReplace, planUpdate, retryStatusView, sealColumns, touchesDelivery,
  type AppConfigInput, type AppConfigView, type RetryStatusView, type WebhookAttemptsView,
} from '../management/app-config';

export interface AppConfigUseCaseDeps {
  /** tx.app_configs and the application's webhook queue; the writes run in transactions of their own. */
  db: Knex;
  /** Seals the webhook secret before it is stored; opens stored ones only to compare them. */
  secretBox: Pick<SecretBox, 'seal' | 'open'>;
  /** Development and tests only: accept http and loopback/private webhook targets. */
  allowPrivateWebhookTargets: boolean;
  /** Drains the application's webhook queue now; undefined when another copy is delivering for it. */
  retryWebhooks: (appId: string) => Promise<RetryReport | undefined>;
  clock: Pick<Clock, 'now'>;
  logger: Logger;
}

/** A write refused for the spec's 400 (the message says why), or done. */
export type ConfigWriteOutcome = { ok: true } | { ok: false; error: string };

/**
 * The push configuration of one application (every call is scoped by the caller's app id) and
 * its webhook queue: what the app-config routes call. Writes of a changed target resume (or park)
 * the queue in the same transaction; the secret is sealed here and never read back out.
 */
export interface AppConfigUseCases {
  show(appId: string): Promise<AppConfigView | null>;
  /** POST: every field not sent returns to its default. */
  replace(appId: string, input: AppConfigInput): Promise<ConfigWriteOutcome>;
  /** PUT: only the fields sent change. */
  update(appId: string, input: AppConfigInput): Promise<ConfigWriteOutcome>;
  remove(appId: string): Promise<void>;
  retryStatus(appId: string): Promise<RetryStatusView>;
  /** The manual retry: what it attempted and what is still queued. */
  retryNow(appId: string): Promise<RetryReport>;
  attempts(appId: string, cursor: string | null, limit: number, filter: WebhookAttemptFilter): Promise<WebhookAttemptsView>;
}

export function appConfigUseCases(deps: AppConfigUseCaseDeps): AppConfigUseCases {
  const repo = new AppConfigRepository(deps.db);
  const log = deps.logger.child({ component: 'app-config' });
  const targetOptions = { allowPrivate: deps.allowPrivateWebhookTargets };
  const seal = (plain: string) => deps.secretBox.seal(plain);
  const open = (sealed: string) => deps.secretBox.open(sealed);
  /** Fields written, for the log: names only, never values (the secret must not reach logs). */
  const fieldsOf = (input: AppConfigInput) => Object.keys(input).sort();

  /** Another copy is delivering for the application right now: nothing attempted here. */
  async function busyReport(appId: string): Promise<RetryReport> {
    const queue = await repo.queueSummary(appId);
    return { attempted: 0, delivered: 0, failed: 0, finalFailed: false, nextRetryAt: queue.nextAttemptAtMs === null ? null : Math.floor(queue.nextAttemptAtMs / 1000), pending: queue.pending };
  }

  return {
    async show(appId) {
      const row = await repo.find(appId);
      return row ? configView(row) : null;
    },

    async replace(appId, input) {
      const plan = planReplace(input, targetOptions);
      if (!plan.ok) return plan;
      const now = deps.clock.now();
      // A configuration whose target changed resumes the queue at once (or parks it) in the same
      // transaction; one written again as it was restarts no clock.
      await deps.db.transaction(async (trx) => {
        const before = await storedTarget(trx, appId);
        await new AppConfigRepository(trx).replace(appId, sealColumns(plan.values, seal), new Date(now));
        if (targetChanged(before, await storedTarget(trx, appId), open)) await resumeWebhookQueue(trx, appId, now);
      });
      log.info({ msg: 'app_config_replaced', appId, fields: fieldsOf(input) });
      return { ok: true };
    },

    async update(appId, input) {
      const plan = planUpdate(input, targetOptions);
      if (!plan.ok) return plan;
      const now = deps.clock.now();
      await deps.db.transaction(async (trx) => {
        const before = touchesDelivery(input) ? await storedTarget(trx, appId) : undefined;
        await new AppConfigRepository(trx).update(appId, sealColumns(plan.values, seal), sealColumns(insertValues(plan.values), seal), new Date(now));
        if (touchesDelivery(input) && targetChanged(before, await storedTarget(trx, appId), open)) await resumeWebhookQueue(trx, appId, now);
      });
      log.info({ msg: 'app_config_updated', appId, fields: fieldsOf(input) });
      return { ok: true };
    },

    async remove(appId) {
      const deleted = await repo.remove(appId);
      log.info({ msg: 'app_config_deleted', appId, existed: deleted });
    },

    async retryStatus(appId) {
      const [row, queue] = await Promise.all([repo.find(appId), repo.queueSummary(appId)]);
      return retryStatusView(appId, row, queue);
    },

    async retryNow(appId) {
      const report = (await deps.retryWebhooks(appId)) ?? (await busyReport(appId));
      log.info({ msg: 'webhook_manual_retry', appId, ...report });
      return report;
    },

    async attempts(appId, cursor, limit, filter) {
      return attemptsView(await repo.webhookAttempts(appId, cursor, limit, filter), limit);
    },
  };
}
