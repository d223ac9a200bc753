import { createHmac } from 'node:crypto';

/**
 * Headers of one webhook POST: `Sign` is the application's secret passed through unchanged (the
 * spec's contract; empty when unset), and the Standard Webhooks headers let receivers verify the
 * body with any Standard Webhooks library, the configured secret used as the raw key
 * (`new Webhook(secret, { format: 'raw' })`): `webhook-signature` = `v1,` + base64
 * HMAC-SHA256 over `id.timestamp.body`. Without a secret there is nothing to sign with, so
 * `webhook-signature` is left out.
 */
export function webhookHeaders(id: string, timestampSeconds: number, body: string, secret: string | null): Record<string, string> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    sign: secret ?? '',
    'webhook-id': id,
    'webhook-timestamp': String(timestampSeconds),
  };
  if (secret) headers['webhook-signature'] = `v1,${createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${id}.${timestampSeconds}.${body}`).digest('base64')}`;
  return headers;
}
