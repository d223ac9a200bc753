import express, { type RequestHandler } from 'express';
import { formatErrors } from '@chainpipe/contracts';
import { ApiRoutes, apiKeyAuth } from '@chainpipe/http';
import { QuoteStore, ReferenceRepository, ReferenceSnapshot } from '@chainpipe/price-store';
import type { RouteModule } from '@chainpipe/http';
import type { PriceDeps } from './deps';
import { PRICE_AUTH, PriceCode, priceEnvelopeFor, sendPriceError } from './envelope';
import { PoolDetailService } from './pool-detail.service';
import { poolsRoutes } from './pools.routes';
import { quotesRoutes } from './quotes.routes';
import { referenceRoutes } from './reference.routes';

/** The JSON body parser of the price routes: a malformed body is the spec's 20003 `invalid JSON body`. */
function priceJsonBody(limitBytes: number): RequestHandler {
  const json = express.json({ limit: limitBytes, strict: false, type: () => true });
  return (req, res, next) =>
    json(req, res, (err?: unknown) => {
      if ((err as { type?: string } | undefined)?.type === 'entity.parse.failed') return sendPriceError(res, 400, PriceCode.badBatchBody, 'invalid JSON body');
      next(err);
    });
}

/**
 * The token price service under `/price/api/v1`. Every route needs `X-API-Key`: missing → 401
 * `unauthorized`, unknown or disabled → 403 `forbidden` (docs/decisions.md#d5).
 */
export function priceModule(deps: PriceDeps): RouteModule {
  const repo = new ReferenceRepository(deps.db);
  const snapshot = new ReferenceSnapshot(repo, { refreshMs: deps.referenceRefreshMs, missReloadMs: 1_000, clock: deps.clock });
  const pools = new PoolDetailService({ repo, redis: deps.redis, logger: deps.logger, registry: deps.registry, clock: deps.clock, upstream: deps.poolUpstream, cacheTtlMs: deps.poolCacheTtlMs });
  const api = new ApiRoutes({
    contracts: deps.contracts,
    auth: { [PRICE_AUTH]: apiKeyAuth(deps.resolveKey, { missing: 'unauthorized', invalid: 'forbidden' }) },
    jsonBody: priceJsonBody(deps.bodyLimitBytes),
    // A malformed parameter is the service's 20001 (HTTP 400), its message naming the parameter.
    invalid: (res, errors) => sendPriceError(res, 400, PriceCode.missingParameter, formatErrors([...errors])),
  });
  referenceRoutes(api, deps);
  quotesRoutes(api, { snapshot, store: new QuoteStore(deps.redis), contracts: deps.contracts, clock: deps.clock, freshness: deps.freshness });
  poolsRoutes(api, { pools, logger: deps.logger });
  return { name: 'price', envelopeFor: priceEnvelopeFor, api };
}
