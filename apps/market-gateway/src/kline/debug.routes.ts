import type { HttpKlineHealth } from '@chainpipe/contracts';
import type { RequestHandler } from 'express';
import { cameViaOps, sendError, type ApiRoutes } from '@chainpipe/http';
import { IngesterStatusStore } from '@chainpipe/kline-store';
import { errorMessage } from '@chainpipe/runtime';
import type { KlineDeps } from './deps';
import { KLINE_ADMIN_PREFIX, KLINE_AUTH, KLINE_PREFIX, KlineCode, sendKlineError, sendKlineOk } from './envelope';
import type { KlineHub } from './ws-hub';
import { KLINE_WS_PATH } from './ws-upgrade';

const DEBUG = ['debug and health'];

/** The rate limit of the debug `ensure` route (a name in the module's `ApiRoutes` rate limits). */
export const KLINE_ENSURE_LIMIT = 'ensure';

/**
 * Debug endpoints (no authentication of their own: for controlled networks, spec), the health
 * endpoint, and the plain HTTP answers of the WebSocket paths (upgrades are taken over on the
 * server before express sees them; the key is checked there).
 */
export function debugRoutes(api: ApiRoutes, deps: KlineDeps, hub: KlineHub): void {
  const status = new IngesterStatusStore(deps.redis);
  const log = deps.logger.child({ component: 'kline-debug' });
  // KLINE_DEBUG_ON_OPS: the debug routes exist on the ops listener only; the public port answers
  // them as it answers any route it does not serve.
  const onlyOnOps: RequestHandler = (req, res, next) => (cameViaOps(req) ? next() : sendError(res, 404, `no route for ${req.method} ${req.path}`));
  const opsErrors: Record<number, string> = deps.debugOnOps ? { 404: 'KLINE_DEBUG_ON_OPS: served on the ops listener only' } : {};
  const where = deps.debugOnOps ? { preValidation: [onlyOnOps], errors: opsErrors } : {};

  api.route(
    {
      method: 'get',
      path: `${KLINE_ADMIN_PREFIX}/admin/debug/ingester/status`,
      summary: 'Upstream feed status of the candle ingester (raw JSON)',
      tags: DEBUG,
      auth: 'none',
      ...where,
      ok: {
        data: 'http/kline/ingester-status',
        bare: true,
        description: 'the ingester status, not in the envelope',
        example: { connected: true, channelConfirmed: true, lastTickAt: '2026-11-24T12:00:00.000Z', poolCount: 1, pools: [{ poolId: 1, chainRefId: '1', chainType: 'evm', chainId: 1, networkId: 'eth', poolAddress: '0x88e6a0c2ddd26feeb64f039a2c41296fcb3f5640', token: 'base' }] },
      },
    },
    async (_req, res) => void res.json(await status.read()),
  );

  api.route(
    {
      method: 'post',
      path: `${KLINE_ADMIN_PREFIX}/admin/debug/ingester/ensure`,
      summary: 'Ask the ingester to re-read the active pools and resubscribe',
      tags: DEBUG,
      auth: 'none',
      // Open to anyone (the spec's debug routes need no key), and each call resubscribes the ingester.
      rateLimit: KLINE_ENSURE_LIMIT,
      ok: { data: { const: 'ok' }, bare: true, mediaType: 'text/plain', description: 'plain text `ok`', example: 'ok' },
      ...where,
      errors: { ...opsErrors, 500: 'code 99001: the request could not be published' },
    },
    async (_req, res) => {
      try {
        await deps.publishPoolNotice({ action: 'ensure', pool_id: null, at: deps.clock.now() });
      } catch (err) {
        log.warn({ msg: 'ensure_publish_failed', err: errorMessage(err) });
        return sendKlineError(res, 500, KlineCode.internal, 'Internal server error');
      }
      res.type('text/plain').send('ok');
    },
  );

  api.route(
    {
      method: 'get',
      path: `${KLINE_ADMIN_PREFIX}/admin/debug/hub/status`,
      summary: 'WebSocket hub of this gateway copy (raw JSON)',
      tags: DEBUG,
      auth: 'none',
      ...where,
      ok: {
        data: 'http/kline/hub-status',
        bare: true,
        description: 'connections and subscribed pools, not in the envelope',
        example: { wsCount: 2, poolCount: 1, pools: [{ key: 'evm:1:0x88e6a0c2ddd26feeb64f039a2c41296fcb3f5640:base', clientCount: 2 }], lastIngestAt: '2026-11-24T12:00:00.000Z', lastIngestKey: 'evm:1:0x88e6a0c2ddd26feeb64f039a2c41296fcb3f5640:base' },
      },
    },
    (_req, res) => void res.json(hub.status()),
  );

  api.route(
    {
      method: 'get',
      path: `${KLINE_ADMIN_PREFIX}/health`,
      summary: 'Health of the candlestick service',
      tags: DEBUG,
      auth: KLINE_AUTH,
      ok: { data: 'http/kline/health', message: 'ok', description: '`{ status: "ok", timestamp }`', example: { status: 'ok', timestamp: '2026-11-24T12:00:00.000Z' } },
    },
    (_req, res) => sendKlineOk(res, { status: 'ok', timestamp: new Date(deps.clock.now()).toISOString() } satisfies HttpKlineHealth),
  );

  api.route(
    {
      method: 'get',
      path: KLINE_WS_PATH,
      summary: 'Live candles over WebSocket (upgrade only)',
      description:
        'Handshake: `Upgrade: websocket`, `X-API-Key` (401/403 `Unauthorized`, code 20001); a browser, which cannot send headers, offers the key as the subprotocol `x-api-key.<key>` beside `kline.v1` instead (the server selects `kline.v1`, never the key). Commands `ping`, `subscribe`, `unsubscribe`; pushes `ohlcv` (live `ok`, `snapshot` after `subscribed`). Messages: docs/decisions.md#d119 and the AsyncAPI document.',
      tags: ['candles'],
      auth: 'none',
      ok: { status: 101, data: { type: 'null' }, bare: true, description: 'switching protocols (WebSocket)' },
      errors: { 401: 'code 20001 `Unauthorized`: no X-API-Key', 403: 'code 20001 `Unauthorized`: invalid key', 426: 'code 4000 `WebSocket upgrade required`' },
    },
    (_req, res) => sendKlineError(res, 426, KlineCode.upgradeRequired, 'WebSocket upgrade required'),
  );

  api.route(
    {
      method: 'get',
      path: `${KLINE_PREFIX}/ws/:topic`,
      summary: 'Generic WebSocket: application ping only (upgrade only)',
      description: 'Answers `ping` with `pong`; a binary frame gets an `error` with code 4001. A plain HTTP request: 426 with the text `Expected WebSocket upgrade`.',
      tags: ['candles'],
      auth: 'none',
      request: { path: 'http/kline/topic-path' },
      ok: { status: 101, data: { type: 'null' }, bare: true, description: 'switching protocols (WebSocket)' },
      errors: { 426: { description: 'no WebSocket upgrade requested', mediaType: 'text/plain', example: 'Expected WebSocket upgrade' } },
    },
    (_req, res) => void res.status(426).type('text/plain').send('Expected WebSocket upgrade'),
  );
}
