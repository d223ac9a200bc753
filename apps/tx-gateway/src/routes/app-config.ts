import type { Response } from 'express';
import { PRINCIPAL, requestParams, sendError, sendOk, type ApiRoutes, type Principal } from '@chainpipe/http';
import { ATTEMPTS_PAGE } from '../management/app-config';
import type { AppConfigUseCases } from '../use-cases/app-config';

/**
 * Push configuration of the caller's application (GET/POST/PUT/DELETE /tx/api/v1/app/config)
 * and its webhook retry status, over the app-config use-cases. Every call is scoped by the API
 * key's application; the webhook secret is sealed before it is stored and never read back out
 * through this API.
 */
export function appConfigRoutes(api: ApiRoutes, appConfig: AppConfigUseCases): void {
  const appOf = (res: Response) => (res.locals[PRINCIPAL] as Principal).appId;

  const tags = ['push configuration'];
  const done = { data: { const: 'success' }, description: '`data` is `success`', example: 'success' } as const;
  const badTarget = { 400: 'request validation failed, or webhook_url is not an https URL of a public host (the message says why)' };
  const configBody = { enable_webhook: true, webhook_url: 'https://hooks.example.com/chainpipe', webhook_secret: 'a shared secret', ws_ack_resend_interval_seconds: 30 };

  api.route(
    {
      method: 'get',
      path: '/tx/api/v1/app/config',
      summary: 'Push configuration of the application',
      tags,
      auth: 'apiKey',
      ok: {
        data: 'http/tx/app-config',
        description: 'the configuration (never the webhook secret), or null when none is stored',
        example: {
          app_id: 'my-app',
          enable_ws: true,
          enable_webhook: true,
          webhook_url: 'https://hooks.example.com/chainpipe',
          ws_ack_resend_interval_seconds: 30,
          webhook_delivery_status: 'active',
          webhook_retrying_since: null,
          webhook_last_failed_transaction_id: null,
          webhook_last_failure_reason: null,
          is_active: true,
          created_at: '2026-11-20T08:00:00.000Z',
          updated_at: '2026-11-21T09:30:00.000Z',
        },
      },
    },
    async (_req, res) => {
      sendOk(res, await appConfig.show(appOf(res)));
    },
  );

  api.route(
    {
      method: 'post',
      path: '/tx/api/v1/app/config',
      summary: 'Create or replace the push configuration',
      description: 'Fields not sent return to their defaults (the secret included). `is_active` can only be changed with PUT.',
      tags,
      auth: 'apiKey',
      request: { body: 'http/tx/app-config-post', bodyExample: configBody },
      preValidation: [
        (req, res, next) => {
          // Named before the schema's generic "is not allowed": the field exists, just not here.
          if (req.body && typeof req.body === 'object' && !Array.isArray(req.body) && 'is_active' in req.body) {
            return sendError(res, 400, 'is_active can only be changed with PUT');
          }
          next();
        },
      ],
      ok: done,
      errors: badTarget,
    },
    async (req, res) => {
      const outcome = await appConfig.replace(appOf(res), req.body);
      if (!outcome.ok) return sendError(res, 400, outcome.error);
      sendOk(res, 'success');
    },
  );

  api.route(
    {
      method: 'put',
      path: '/tx/api/v1/app/config',
      summary: 'Change parts of the push configuration',
      description: 'Only the fields sent change; without a stored configuration the defaults plus these fields are stored.',
      tags,
      auth: 'apiKey',
      request: { body: 'http/tx/app-config-put', bodyExample: { enable_webhook: false, is_active: true } },
      ok: done,
      errors: badTarget,
    },
    async (req, res) => {
      const outcome = await appConfig.update(appOf(res), req.body);
      if (!outcome.ok) return sendError(res, 400, outcome.error);
      sendOk(res, 'success');
    },
  );

  api.route(
    { method: 'delete', path: '/tx/api/v1/app/config', summary: 'Delete the push configuration', description: 'Idempotent; a later GET answers `data` null.', tags, auth: 'apiKey', ok: done },
    async (_req, res) => {
      await appConfig.remove(appOf(res));
      sendOk(res, 'success');
    },
  );

  api.route(
    {
      method: 'get',
      path: '/tx/api/v1/app/webhook/retry/status',
      summary: 'Webhook delivery and retry status',
      tags,
      auth: 'apiKey',
      ok: {
        data: 'http/tx/retry-status',
        description: 'delivery status and the retry queue of the application',
        example: {
          app_id: 'my-app',
          enable_webhook: true,
          webhook_delivery_status: 'retrying',
          webhook_retrying_since: 1763712000,
          webhook_last_failed_transaction_id: null,
          webhook_last_failure_reason: 'HTTP 503',
          pending: 12,
          next_retry_at: 1763712064,
        },
      },
    },
    async (_req, res) => {
      sendOk(res, await appConfig.retryStatus(appOf(res)));
    },
  );

  api.route(
    {
      method: 'post',
      path: '/tx/api/v1/app/webhook/retry',
      summary: 'Retry queued webhook deliveries now',
      description:
        'No body. Sends the queue head at once, ignoring the schedule: up to 3 batches, answering by half the request deadline with what was done so far (a POST still running is counted as attempted and goes on; the scheduler sends the rest). `data` is a nested envelope whose `data` counts transactions.',
      tags,
      auth: 'apiKey',
      ok: {
        data: 'http/tx/webhook-retry',
        description: 'what this retry attempted and what is still queued',
        example: { code: 0, message: 'success', data: { attempted: 3, delivered: 3, failed: 0, finalFailed: false, nextRetryAt: null, pending: 0 } },
      },
    },
    async (_req, res) => {
      sendOk(res, { code: 0, message: 'success', data: await appConfig.retryNow(appOf(res)) });
    },
  );

  api.route(
    {
      method: 'get',
      path: '/tx/api/v1/app/webhook/attempts',
      summary: 'Recent webhook delivery attempts',
      description:
        'Every webhook POST made for the application, newest first: when, its `webhook-id` and the hashes of the transactions it carried, the receiver’s status or the error, latency, and the retry a failure scheduled. `outcome` (delivered, failed) and `tx_hash` keep only the matching attempts. Pages by `cursor` (the previous page’s `next_cursor`); attempts are kept for a few days.',
      tags,
      auth: 'apiKey',
      request: { query: 'http/tx/webhook-attempts-query' },
      ok: {
        data: 'http/tx/webhook-attempts',
        description: 'a page of attempts and the cursor of the next',
        example: {
          items: [
            { id: '1042', attempted_at: '2026-11-21T09:30:01.250Z', path: 'retry', webhook_id: 'b9c1f04e2a7d83b5160fe2c94d7a01b7', tx_hashes: ['0x3f0c1b2a4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8', '0x9a8b7c6d5e4f30211203f4e5d6c7b8a99a8b7c6d5e4f30211203f4e5d6c7b8a9'], transactions: 2, delivered: false, status_code: 503, error: 'HTTP 503', latency_ms: 84, next_retry_at: 1763717405 },
            { id: '1037', attempted_at: '2026-11-21T09:30:00.120Z', path: 'live', webhook_id: '5d2c7e9a0b4f4e1c8a3d6b2f1e0c9a87', tx_hashes: ['0x0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c'], transactions: 1, delivered: true, status_code: 200, error: null, latency_ms: 41, next_retry_at: null },
          ],
          next_cursor: '1037',
        },
      },
      errors: { 400: 'limit is not an integer from 1 to 100, or cursor is not an attempt id' },
    },
    async (_req, res) => {
      const query = requestParams(res);
      const limit = query.limit === undefined ? ATTEMPTS_PAGE.default : Number(query.limit);
      if (!(limit >= 1 && limit <= ATTEMPTS_PAGE.max)) return sendError(res, 400, `limit must be an integer from 1 to ${ATTEMPTS_PAGE.max}`);
      const filter = { delivered: query.outcome === undefined ? undefined : query.outcome === 'delivered', txHash: query.tx_hash };
      sendOk(res, await appConfig.attempts(appOf(res), query.cursor ?? null, limit, filter));
    },
  );
}
