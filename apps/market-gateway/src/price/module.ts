import express from 'express';
import { requireApiKey } from '@chainpipe/http';
import { QuoteStore, ReferenceRepository } from '@chainpipe/price';
import type { RouteModule } from '../route-module';
import type { PriceDeps } from './deps';
import { PRICE_PREFIX, priceEnvelopeFor } from './envelope';
import { PoolDetailService } from './pool-detail.service';
import { poolsRoutes } from './pools.routes';
import { quotesRoutes } from './quotes.routes';
import { ReferenceSnapshot } from './reference-snapshot';
import { referenceRoutes } from './reference.routes';

/**
 * The token price service under `/price/api/v1`. Every route needs `X-API-Key`: missing → 401
 * `unauthorized`, unknown or disabled → 403 `forbidden` (DECISIONS.md).
 */
export function priceModule(deps: PriceDeps): RouteModule {
  const repo = new ReferenceRepository(deps.db);
  const snapshot = new ReferenceSnapshot(repo, { refreshMs: deps.referenceRefreshMs, missReloadMs: 1_000, now: deps.now });
  const pools = new PoolDetailService({ repo, redis: deps.redis, logger: deps.logger, registry: deps.registry, now: deps.now, upstream: deps.poolUpstream, cacheTtlMs: deps.poolCacheTtlMs });
  return {
    name: 'price',
    envelopeFor: priceEnvelopeFor,
    mount(app) {
      const router = express.Router();
      router.use(requireApiKey(deps.resolveKey, { missing: 'unauthorized', invalid: 'forbidden' }));
      router.use(referenceRoutes(deps));
      router.use(quotesRoutes({ snapshot, store: new QuoteStore(deps.redis), contracts: deps.contracts, now: deps.now, quoteMaxAgeMs: deps.quoteMaxAgeMs, bodyLimitBytes: deps.bodyLimitBytes }));
      router.use(poolsRoutes({ pools, logger: deps.logger }));
      app.use(PRICE_PREFIX, router);
    },
  };
}
