import { loadContracts } from '@chainpipe/contracts';
import { ApiKeyRepository, createDb, dbComponent } from '@chainpipe/db';
import { createKeyResolver, listen } from '@chainpipe/http';
import { createRedis, redisComponent } from '@chainpipe/redis';
import { bootApp, runMain } from '@chainpipe/runtime';
import { createMarketGatewayApp } from './app';
import { marketGatewayConfig } from './config';
import { priceModule } from './price/module';

runMain(async () => {
  const { config, logger, registry, lifecycle } = bootApp('market-gateway', marketGatewayConfig);

  const db = createDb({ url: config.DATABASE_URL, poolMax: config.DB_POOL_MAX, applicationName: 'market-gateway', statementTimeoutMs: config.REQUEST_TIMEOUT_MS });
  lifecycle.add(dbComponent(db));
  const redis = createRedis({ url: config.REDIS_URL, keyPrefix: config.REDIS_KEY_PREFIX });
  lifecycle.add(redisComponent(redis));

  const keys = new ApiKeyRepository(db);
  const resolveKey = createKeyResolver((keyId) => keys.findKey(keyId));
  const app = createMarketGatewayApp({
    logger,
    registry,
    timeoutMs: config.REQUEST_TIMEOUT_MS,
    modules: [
      priceModule({
        db,
        redis,
        contracts: loadContracts(),
        logger,
        registry,
        resolveKey,
        now: Date.now,
        bodyLimitBytes: config.BODY_LIMIT_BYTES,
        quoteMaxAgeMs: config.QUOTE_MAX_AGE_MS,
        referenceRefreshMs: config.REFERENCE_REFRESH_MS,
        poolUpstream: { baseUrl: config.POOL_UPSTREAM_URL, apiKey: config.POOL_UPSTREAM_API_KEY, timeoutMs: config.POOL_UPSTREAM_TIMEOUT_MS },
        poolCacheTtlMs: config.POOL_CACHE_TTL_MS,
      }),
    ],
  });
  const http = await listen(app, config.PORT, config.HOST);
  lifecycle.add({ name: 'http', stop: () => http.close() });

  const ops = await lifecycle.serveOps({ host: config.OPS_HOST, port: config.OPS_PORT, registry });
  lifecycle.markStarted();
  logger.info({ msg: 'started', port: http.address.port, opsPort: ops.port });
});
