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
 * replaced: due at once, the back-off and the 36 h counted afresh, the status out of `disabled`
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
  if (queued) await trx('tx.webhook_queue').where({ app_id: appId }).update({ attempts: 0, first_failed_at: nowMs });
  const update: Record<string, unknown> = { webhook_next_attempt_at: queued ? nowMs : null };
  if (!queued) Object.assign(update, { webhook_delivery_status: 'active', webhook_retrying_since: null });
  else if (cfg.webhook_delivery_status === 'disabled') Object.assign(update, { webhook_delivery_status: 'retrying', webhook_retrying_since: Math.floor(nowMs / 1000) });
  await trx('tx.app_configs').where({ app_id: appId }).update(update);
}
