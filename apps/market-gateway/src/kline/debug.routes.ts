import express, { type Router } from 'express';
import { IngesterStatusStore } from '@chainpipe/kline-store';
import { errorMessage } from '@chainpipe/runtime';
import type { KlineDeps } from './deps';
import { KLINE_WS_PATH, TOPIC_WS_PATTERN } from './ws-upgrade';
import { KlineCode, sendKlineError } from './envelope';
import type { KlineHub } from './ws-hub';

/**
 * Debug endpoints (no authentication of their own: for controlled networks, spec) and the plain
 * HTTP answers of the WebSocket paths.
 */
export function debugRoutes(deps: KlineDeps, hub: KlineHub): Router {
  const router = express.Router();
  const status = new IngesterStatusStore(deps.redis);
  const log = deps.logger.child({ component: 'kline-debug' });

  router.get('/api/v1/admin/debug/ingester/status', async (_req, res) => void res.json(await status.read()));
  router.post('/api/v1/admin/debug/ingester/ensure', async (_req, res) => {
    try {
      await deps.publishPoolNotice({ action: 'ensure', pool_id: null, at: deps.now() });
    } catch (err) {
      log.warn({ msg: 'ensure_publish_failed', err: errorMessage(err) });
      return sendKlineError(res, 500, KlineCode.internal, 'Internal server error');
    }
    res.type('text/plain').send('ok');
  });
  router.get('/api/v1/admin/debug/hub/status', (_req, res) => void res.json(hub.status()));

  // Reached only without an upgrade: upgrades are taken over before express sees them.
  router.get(KLINE_WS_PATH, (_req, res) => sendKlineError(res, 426, KlineCode.upgradeRequired, 'WebSocket upgrade required'));
  router.get(TOPIC_WS_PATTERN, (_req, res) => void res.status(426).type('text/plain').send('Expected WebSocket upgrade'));
  return router;
}
