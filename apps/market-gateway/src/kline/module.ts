import express from 'express';
import type { KlineCandlesMessage } from '@chainpipe/contracts';
import { ApiRoutes, WsConnectionSet, apiKeyAuth, operatorKeyAuth, type WsPeer } from '@chainpipe/http';
import type { BatchHandler } from '@chainpipe/kafka';
import { LatestCandles, PoolRepository } from '@chainpipe/kline-store';
import type { RouteModule, UpgradeHandler } from '@chainpipe/http';
import { KLINE_ENSURE_LIMIT, debugRoutes } from './debug.routes';
import { demoRoutes } from './demo.routes';
import type { KlineDeps } from './deps';
import { KLINE_AUTH, KLINE_OPERATOR_AUTH, KlineCode, klineEnvelopeFor } from './envelope';
import { marketRoutes } from './market.routes';
import { ohlcvRoutes } from './ohlcv.routes';
import { poolsRoutes } from './pools.routes';
import { klineInvalid } from './validation';
import { KlineHub } from './ws-hub';
import { klineUpgrade } from './ws-upgrade';

export interface KlineModule extends RouteModule {
  hub: KlineHub;
  /** Both candlestick WebSocket endpoints (the hub and the topic sockets): pings started, and every connection closed on shutdown. */
  websockets: { start(): void; closeAll(): Promise<void> };
  /** Takes over the upgrade of a candlestick WebSocket path; false for other paths. */
  upgrade: UpgradeHandler;
  /** Renews the per-key cap's leases of this copy's open connections (`KlineDeps.connectionCap`); the service runs it periodically. */
  renewConnectionLeases(): Promise<void>;
  /** Handler of kline.candles.v2 (every gateway copy reads it with a group of its own). */
  candlesHandler: BatchHandler<KlineCandlesMessage>;
}

/**
 * The candlestick service: `/kline/api/v1/*` and `/api/v1/*` (admin, debug, health), and the
 * live chart page `/kline/demo`. Every route except the debug ones and the page needs
 * `X-API-Key`; missing → 401, unknown → 403, both code 20001 `Unauthorized`. Registering,
 * activating and deactivating pools needs an operator's key: a customer's is 403, code 20002.
 */
export function klineModule(deps: KlineDeps): KlineModule {
  const pools = new PoolRepository(deps.db);
  const hub = new KlineHub({
    activePools: (chainType, chainId, address) => pools.activeByAddress(chainType, chainId, address),
    latest: new LatestCandles(deps.redis),
    logger: deps.logger,
    registry: deps.registry,
    clock: deps.clock,
    maxBufferedBytes: deps.ws.maxBufferedBytes,
    pingMs: deps.ws.pingMs,
  });
  const topicSockets = new WsConnectionSet<WsPeer>({ pingIntervalMs: deps.ws.pingMs, maxBufferedBytes: deps.ws.maxBufferedBytes });
  const api = new ApiRoutes({
    contracts: deps.contracts,
    auth: {
      [KLINE_AUTH]: apiKeyAuth(deps.resolveKey, { missing: 'Unauthorized', invalid: 'Unauthorized' }),
      [KLINE_OPERATOR_AUTH]: operatorKeyAuth(deps.resolveKey, { messages: { missing: 'Unauthorized', invalid: 'Unauthorized' }, forbidden: { message: 'Forbidden', code: KlineCode.forbidden } }),
    },
    jsonBody: express.json({ limit: deps.bodyLimitBytes, strict: false, type: () => true }),
    invalid: klineInvalid,
    rateLimits: { [KLINE_ENSURE_LIMIT]: deps.ensureLimit },
  });
  const upgrades = klineUpgrade({ hub, topicSockets, resolveKey: deps.resolveKey, logger: deps.logger, clock: deps.clock, connectionCap: deps.connectionCap });
  debugRoutes(api, deps, hub);
  poolsRoutes(api, deps);
  ohlcvRoutes(api, deps);
  marketRoutes(api, deps);
  demoRoutes(api);
  return {
    name: 'kline',
    api,
    envelopeFor: klineEnvelopeFor,
    hub,
    websockets: {
      start: () => {
        hub.start();
        topicSockets.start();
      },
      closeAll: async () => {
        await Promise.all([hub.closeAll(), topicSockets.closeAll(2_000)]);
      },
    },
    upgrade: upgrades.upgrade,
    renewConnectionLeases: upgrades.renewLeases,
    candlesHandler: async (records) => {
      for (const r of records) hub.deliver(r.value);
    },
  };
}
