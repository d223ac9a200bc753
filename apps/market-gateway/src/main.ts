import { ApiKeyRepository, addPostgres } from '@chainpipe/db';
import { addHttpServer, createKeyResolver } from '@chainpipe/http';
import { loadContracts } from '@chainpipe/contracts';
import { addRedis } from '@chainpipe/redis';
import { runService } from '@chainpipe/runtime';
import { createMarketGatewayApp } from './app';
import { marketGatewayConfig } from './config';
import { priceModule } from './price/module';

runService('market-gateway', marketGatewayConfig, (svc) => {
  const { config, logger, registry } = svc;
  const db = addPostgres(svc, { statementTimeoutMs: config.REQUEST_TIMEOUT_MS });
  const redis = addRedis(svc);
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
  addHttpServer(svc, app);
});
