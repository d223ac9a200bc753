import type { HttpTxAppConfig, HttpTxAppConfigPut, HttpTxRetryStatus, HttpTxWebhookAttempts } from '@chainpipe/contracts';
import type { AppConfigRow, ConfigColumns, WebhookAttemptRow } from '@chainpipe/tx-store';
import { checkWebhookUrl, type WebhookTargetOptions } from '@chainpipe/webhooks';

/**
 * Push configuration of an application: what a POST (create or replace) and a PUT (partial
 * update) write, and what reads show. The JSON Schemas (`http/tx/app-config-post`, `-put`) have
 * checked types and ranges already; this adds the checks a schema cannot express (the webhook
 * target) and the merge rules.
 */

/** Body of POST and PUT after schema validation (generated from `http/tx/app-config-put`); `is_active` only reaches here through PUT. */
export type AppConfigInput = HttpTxAppConfigPut;

// The stored shapes live with their repository (libs/tx-store); this module maps them.
export type { AppConfigRow, ConfigColumns };

/** The client-writable columns of tx.app_configs, with the secret still in plain text. */
export interface WritableConfig {
  enable_ws: boolean;
  enable_webhook: boolean;
  webhook_url: string | null;
  webhook_secret: string | null;
  ws_ack_resend_interval_seconds: number;
  is_active: boolean;
}

/** The table's defaults (migration 20261121010000): a POST resets every unspecified field to them. */
export const CONFIG_DEFAULTS: Readonly<WritableConfig> = {
  enable_ws: true,
  enable_webhook: false,
  webhook_url: null,
  webhook_secret: null,
  ws_ack_resend_interval_seconds: 30,
  is_active: true,
};

export const WRITABLE_FIELDS = ['enable_ws', 'enable_webhook', 'webhook_url', 'webhook_secret', 'ws_ack_resend_interval_seconds', 'is_active'] as const;

export type ConfigWrite<T> = { ok: true; values: T } | { ok: false; error: string };

function checked(input: AppConfigInput, opts: WebhookTargetOptions): ConfigWrite<Partial<WritableConfig>> {
  const values: Partial<WritableConfig> = {};
  for (const field of WRITABLE_FIELDS) {
    if (input[field] !== undefined) (values as Record<string, unknown>)[field] = input[field];
  }
  if (typeof values.webhook_url === 'string') {
    const target = checkWebhookUrl(values.webhook_url, opts);
    if (!target.ok) return { ok: false, error: `webhook_url ${target.reason}` };
  }
  // The secret goes out verbatim as the Sign header; an empty one is the same as none.
  if (values.webhook_secret === '') values.webhook_secret = null;
  return { ok: true, values };
}

/** POST: the full configuration; every field not given takes its default (the secret is cleared). */
export function planReplace(input: AppConfigInput, opts: WebhookTargetOptions = {}): ConfigWrite<WritableConfig> {
  if (input.is_active !== undefined) return { ok: false, error: 'is_active can only be changed with PUT' };
  const c = checked(input, opts);
  if (!c.ok) return c;
  return { ok: true, values: { ...CONFIG_DEFAULTS, ...c.values } };
}

/**
 * PUT: only the fields given. On an application without configuration the result is created from
 * the defaults plus these fields (`insertValues`), so a PUT never fails for want of a POST.
 */
export function planUpdate(input: AppConfigInput, opts: WebhookTargetOptions = {}): ConfigWrite<Partial<WritableConfig>> {
  return checked(input, opts);
}

/**
 * Whether a write can change where or whether the webhook goes (switched on or off, another URL
 * or secret, the configuration (de)activated): the queue is then resumed at once or parked.
 */
export function touchesDelivery(input: AppConfigInput): boolean {
  return input.enable_webhook !== undefined || input.webhook_url !== undefined || input.webhook_secret !== undefined || input.is_active !== undefined;
}

export function insertValues(update: Partial<WritableConfig>): WritableConfig {
  return { ...CONFIG_DEFAULTS, ...update };
}


/** Replaces the plain secret by its sealed form (`seal`: SecretBox.seal); null stays null. */
export function sealColumns(values: WritableConfig, seal: (plain: string) => string): ConfigColumns;
export function sealColumns(values: Partial<WritableConfig>, seal: (plain: string) => string): Partial<ConfigColumns>;
export function sealColumns(values: Partial<WritableConfig>, seal: (plain: string) => string): Partial<ConfigColumns> {
  const { webhook_secret, ...rest } = values;
  if (webhook_secret === undefined) return rest;
  return { ...rest, webhook_secret_enc: webhook_secret === null ? null : seal(webhook_secret) };
}


/** `data` of GET /app/config: the spec's fields, never the secret (schema `http/tx/app-config`). */
export type AppConfigView = NonNullable<HttpTxAppConfig>;
type DeliveryStatus = AppConfigView['webhook_delivery_status'];

const intOrNull = (v: string | number | null): number | null => (v === null || v === undefined ? null : Number(v));

export function configView(row: AppConfigRow): AppConfigView {
  return {
    app_id: row.app_id,
    enable_ws: row.enable_ws,
    enable_webhook: row.enable_webhook,
    webhook_url: row.webhook_url,
    ws_ack_resend_interval_seconds: row.ws_ack_resend_interval_seconds,
    // The only states ever written are the schema's three (webhook delivery sets them).
    webhook_delivery_status: row.webhook_delivery_status as DeliveryStatus,
    webhook_retrying_since: intOrNull(row.webhook_retrying_since),
    webhook_last_failed_transaction_id: intOrNull(row.webhook_last_failed_transaction_id),
    webhook_last_failure_reason: row.webhook_last_failure_reason,
    is_active: row.is_active,
    created_at: new Date(row.created_at).toISOString(),
    updated_at: new Date(row.updated_at).toISOString(),
  };
}

/** `data` of GET /app/webhook/retry/status (schema `http/tx/retry-status`). */
export type RetryStatusView = HttpTxRetryStatus;

/**
 * The queue's next due time is held in Unix milliseconds (the unit of every clock here); the
 * spec shows `next_retry_at` in Unix seconds. `webhook_retrying_since` is stored in the
 * spec's unit (seconds) and shown as stored.
 */
export function retryStatusView(appId: string, row: AppConfigRow | undefined, queue: { pending: number; nextAttemptAtMs: number | null }): RetryStatusView {
  return {
    app_id: appId,
    enable_webhook: row?.enable_webhook ?? CONFIG_DEFAULTS.enable_webhook,
    webhook_delivery_status: (row?.webhook_delivery_status as DeliveryStatus | undefined) ?? 'active',
    webhook_retrying_since: row ? intOrNull(row.webhook_retrying_since) : null,
    webhook_last_failed_transaction_id: row ? intOrNull(row.webhook_last_failed_transaction_id) : null,
    webhook_last_failure_reason: row?.webhook_last_failure_reason ?? null,
    pending: queue.pending,
    next_retry_at: queue.nextAttemptAtMs === null ? null : Math.floor(queue.nextAttemptAtMs / 1000),
  };
}

/** `data` of GET /app/webhook/attempts (schema `http/tx/webhook-attempts`). */
export type WebhookAttemptsView = HttpTxWebhookAttempts;

export const ATTEMPTS_PAGE = { default: 20, max: 100 } as const;

/** A page of attempts; a full page has a next cursor (the last id), a short one is the end. */
export function attemptsView(rows: readonly WebhookAttemptRow[], limit: number): WebhookAttemptsView {
  return {
    items: rows.map((r) => ({
      id: String(r.id),
      attempted_at: new Date(Number(r.attempted_at)).toISOString(),
      path: r.path,
      webhook_id: r.webhook_id,
      tx_hashes: r.tx_hashes ?? [],
      transactions: r.transactions,
      delivered: r.delivered,
      status_code: r.status_code,
      error: r.error,
      latency_ms: r.latency_ms,
      next_retry_at: r.next_retry_at === null ? null : Math.floor(Number(r.next_retry_at) / 1000),
    })),
    next_cursor: rows.length === limit && rows.length > 0 ? String(rows[rows.length - 1].id) : null,
  };
}
