import { TOPICS, loadContracts } from '@chainpipe/contracts';
import { ApiKeyRepository, addPostgres } from '@chainpipe/db';
import { RateLimits, addHttpServer, createKeyResolver, opsListener } from '@chainpipe/http';
import { addKafka, processGroupId } from '@chainpipe/kafka';
import { ConnectionCap, addRedis } from '@chainpipe/redis';
import { periodicJob, runService, systemClock } from '@chainpipe/runtime';
import { createMarketGatewayApp } from './app';
import { marketGatewayConfig } from './config';
import { klineModule } from './kline/module';
import { priceModule } from './price/module';

runService('market-gateway', marketGatewayConfig, async (svc) => {
  const { config, logger, registry } = svc;
  const db = addPostgres(svc, { statementTimeoutMs: config.REQUEST_TIMEOUT_MS });
  const redis = addRedis(svc);
  const keys = new ApiKeyRepository(db);
  const resolveKey = createKeyResolver((keyId) => keys.findKey(keyId));
  const contracts = loadContracts();
  const limits = new RateLimits({ redis, registry, logger, trustedProxies: config.RATE_LIMIT_TRUSTED_PROXIES });

  // Candlesticks: pool notices out (kline.pools.v1), stored candles in (kline.candles.v2).
  // The topics come from scripts/create-topics.ts (the k8s topics Job): an app creates none.
  const kafka = addKafka(svc, { contracts });
  const producer = await kafka.producer();
  const kline = klineModule({
    db,
    redis,
    contracts,
    publishPoolNotice: (notice) => producer.publish(TOPICS.klinePools, [{ value: notice }]),
    logger,
    registry,
    resolveKey,
    market: { baseUrl: config.KLINE_MARKET_API_URL, apiKey: config.MARKET_API_KEY, timeoutMs: config.KLINE_MARKET_TIMEOUT_MS },
    bodyLimitBytes: config.BODY_LIMIT_BYTES,
    clock: systemClock,
    ws: { pingMs: config.KLINE_WS_PING_MS, maxBufferedBytes: config.KLINE_WS_MAX_BUFFERED_BYTES },
    debugOnOps: config.KLINE_DEBUG_ON_OPS,
    ensureLimit: limits.limit('kline_ensure', { perClient: config.RATE_LIMIT_KLINE_ENSURE_PER_CLIENT }),
    connectionCap: {
      // tx-gateway's leases, in sets of their own: a key's push connections take no candle slots.
      cap: new ConnectionCap(redis, { maxPerKey: config.KLINE_WS_MAX_CONNECTIONS_PER_KEY, leaseMs: config.KLINE_WS_CONNECTION_LEASE_MS, keyPrefix: 'kline:ws:conns:' }, systemClock),
      maxPerKey: config.KLINE_WS_MAX_CONNECTIONS_PER_KEY,
      limits,
    },
  });

  const app = createMarketGatewayApp({
    logger,
    registry,
    timeoutMs: config.REQUEST_TIMEOUT_MS,
    modules: [
      priceModule({
        db,
        redis,
        contracts,
        logger,
        registry,
        resolveKey,
        clock: systemClock,
        bodyLimitBytes: config.BODY_LIMIT_BYTES,
        freshness: { quoteMaxAgeMs: config.QUOTE_MAX_AGE_MS, fiatRatesMaxAgeMs: config.FIAT_RATES_MAX_AGE_MS },
        referenceRefreshMs: config.REFERENCE_REFRESH_MS,
        poolUpstream: { baseUrl: config.POOL_UPSTREAM_URL, apiKey: config.POOL_UPSTREAM_API_KEY, timeoutMs: config.POOL_UPSTREAM_TIMEOUT_MS },
        poolCacheTtlMs: config.POOL_CACHE_TTL_MS,
      }),
      kline,
    ],
  });
  const http = addHttpServer(svc, app);
  // The debug routes on the ops listener (where only operators reach) instead of the public port.
  if (config.KLINE_DEBUG_ON_OPS) svc.serveOnOps({ matches: (path) => path.toLowerCase().startsWith('/api/v1/admin/debug/'), handle: opsListener(app) });
  // The candlestick WebSockets: upgrades routed by the server; on shutdown they close before the
  // server stops (open sockets would keep it from closing).
  http.upgrade(kline.upgrade);
  svc.serve({ name: 'kline-websockets', start: async () => kline.websockets.start(), stop: () => kline.websockets.closeAll() });
  // The per-key cap's leases of this copy's connections, renewed well before they run out.
  svc.serve(periodicJob({ name: 'kline_ws_cap_renew', intervalMs: Math.floor(config.KLINE_WS_CONNECTION_LEASE_MS / 3), run: () => kline.renewConnectionLeases(), logger }));
  // Every gateway copy reads every candle (a group of its own, from the latest offset, deleted
  // on a clean stop: live candles need no offsets kept across starts).
  await kafka.consume(TOPICS.klineCandles, {
    groupId: processGroupId(config.KLINE_HUB_GROUP_PREFIX),
    fromBeginning: false,
    removeGroupOnStop: true,
    handler: kline.candlesHandler,
  });
});
