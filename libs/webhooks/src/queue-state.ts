import type { Knex } from '@chainpipe/db';

/** The parts of an application's configuration that decide whether its webhook can be sent. */
export interface DeliverySwitches {
  enable_webhook: boolean;
  is_active: boolean;
  webhook_url: string | null;
}

/** Whether POSTs can go out: the webhook on, a URL, the configuration active. */
export function deliverable(cfg: DeliverySwitches): boolean {
  return cfg.enable_webhook && cfg.is_active && cfg.webhook_url !== null;
}

/**
 * An application's queue after its webhook was switched on again or its target (URL, secret)
 * replaced (`targetChanged`; a write that changes none of them resumes nothing): due at once,
 * the back-off and the 36 h counted afresh, the status out of `disabled`
 * (`retrying` while anything is queued, else `active`). A configuration that still cannot be
 * delivered stays parked (no due time). Runs in the transaction that wrote the configuration,
 * so no match sees the new configuration with the old state.
 */
export async function resumeWebhookQueue(trx: Knex.Transaction, appId: string, nowMs: number): Promise<void> {
  const cfg = (await trx('tx.app_configs').where({ app_id: appId }).forUpdate().first('enable_webhook', 'is_active', 'webhook_url', 'webhook_delivery_status')) as (DeliverySwitches & { webhook_delivery_status: string }) | undefined;
  if (!cfg) return;
  const queued = Boolean(await trx('tx.webhook_queue').where({ app_id: appId }).first('id'));
  if (!deliverable(cfg)) {
    await trx('tx.app_configs').where({ app_id: appId }).update({ webhook_next_attempt_at: null });
    return;
  }
  // Counted afresh: each transaction's clock starts again at its next failure.
  if (queued) await trx('tx.webhook_queue').where({ app_id: appId }).update({ attempts: 0, first_failed_at: null });
  const update: Record<string, unknown> = { webhook_next_attempt_at: queued ? nowMs : null };
  if (!queued) Object.assign(update, { webhook_delivery_status: 'active', webhook_retrying_since: null });
  else if (cfg.webhook_delivery_status === 'disabled') Object.assign(update, { webhook_delivery_status: 'retrying', webhook_retrying_since: Math.floor(nowMs / 1000) });
  await trx('tx.app_configs').where({ app_id: appId }).update(update);
}

/** What decides where and whether an application's webhook goes, as stored (the secret sealed). */
export interface StoredTarget extends DeliverySwitches {
  webhook_secret_enc: string | null;
}

/** The stored target of an application, its row locked for the transaction's write. */
export async function storedTarget(trx: Knex.Transaction, appId: string): Promise<StoredTarget | undefined> {
  return (await trx('tx.app_configs').where({ app_id: appId }).forUpdate().first('enable_webhook', 'is_active', 'webhook_url', 'webhook_secret_enc')) as StoredTarget | undefined;
}

/**
 * Whether a configuration write changed where or whether the webhook goes: switched on or off,
 * (de)activated, another URL or another secret. Secrets are compared opened (`open`): sealing the
 * same secret again gives another text.
 */
export function targetChanged(before: StoredTarget | undefined, after: StoredTarget | undefined, open: (sealed: string) => string): boolean {
  if (!before || !after) return before !== after;
  const secret = (t: StoredTarget) => (t.webhook_secret_enc === null ? null : open(t.webhook_secret_enc));
  return before.enable_webhook !== after.enable_webhook || before.is_active !== after.is_active || before.webhook_url !== after.webhook_url || secret(before) !== secret(after);
}
