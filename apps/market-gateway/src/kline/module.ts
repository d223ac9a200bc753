import express from 'express';
import type { KlineCandleMessage } from '@chainpipe/contracts';
import { requireApiKey } from '@chainpipe/http';
import type { BatchHandler } from '@chainpipe/kafka';
import { LatestCandles, PoolRepository } from '@chainpipe/kline-store';
import type { RouteModule } from '../route-module';
import { debugRoutes } from './debug.routes';
import type { KlineDeps } from './deps';
import { KLINE_ADMIN_PREFIX, KLINE_PREFIX, klineEnvelopeFor, sendKlineOk } from './envelope';
import { marketRoutes } from './market.routes';
import { ohlcvRoutes } from './ohlcv.routes';
import { poolsRoutes } from './pools.routes';
import { KlineHub } from './ws-hub';
import { klineUpgrade } from './ws-upgrade';

export interface KlineModule extends RouteModule {
  hub: KlineHub;
  /** Takes over the upgrade of a candlestick WebSocket path; false for other paths. */
  upgrade: ReturnType<typeof klineUpgrade>;
  /** Handler of kline.candles.v1 (every gateway copy reads it with a group of its own). */
  candlesHandler: BatchHandler<KlineCandleMessage>;
  /** Starts the WebSocket keep-alive; returns its stop. */
  startKeepAlive(): () => void;
}

/**
 * The candlestick service: `/kline/api/v1/*` and `/api/v1/*` (admin, debug, health). Every
 * route except the debug ones needs `X-API-Key`; missing → 401, unknown → 403, both code 20001
 * `Unauthorized`.
 */
export function klineModule(deps: KlineDeps): KlineModule {
  const pools = new PoolRepository(deps.db);
  const hub = new KlineHub({
    activePools: (chainType, chainId, address) => pools.activeByAddress(chainType, chainId, address),
    latest: new LatestCandles(deps.redis),
    logger: deps.logger,
    registry: deps.registry,
    now: deps.now,
    maxBufferedBytes: deps.ws.maxBufferedBytes,
  });
  return {
    name: 'kline',
    envelopeFor: klineEnvelopeFor,
    hub,
    upgrade: klineUpgrade({ hub, resolveKey: deps.resolveKey, logger: deps.logger, now: deps.now }),
    candlesHandler: async (records) => {
      for (const r of records) hub.deliver(r.value);
    },
    startKeepAlive() {
      const t = setInterval(() => hub.keepAlive(), deps.ws.pingMs);
      t.unref();
      return () => {
        clearInterval(t);
        hub.closeAll();
      };
    },
    mount(app) {
      app.use(debugRoutes(deps, hub));
      const auth = requireApiKey(deps.resolveKey, { missing: 'Unauthorized', invalid: 'Unauthorized' });
      const admin = express.Router();
      admin.use(auth, express.json({ limit: deps.bodyLimitBytes, strict: false, type: () => true }));
      admin.get('/health', (_req, res) => sendKlineOk(res, { status: 'ok', timestamp: new Date(deps.now()).toISOString() }));
      admin.use(poolsRoutes(deps));
      app.use(KLINE_ADMIN_PREFIX, admin);
      const api = express.Router();
      api.use(auth);
      api.use(ohlcvRoutes(deps));
      api.use(marketRoutes(deps));
      app.use(KLINE_PREFIX, api);
    },
  };
}
