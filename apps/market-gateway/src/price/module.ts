import express from 'express';
import { requireApiKey } from '@chainpipe/http';
import type { RouteModule } from '../route-module';
import type { PriceDeps } from './deps';
import { PRICE_PREFIX, priceEnvelopeFor } from './envelope';
import { referenceRoutes } from './reference.routes';

/**
 * The token price service under `/price/api/v1`. Every route needs `X-API-Key`: missing → 401
 * `unauthorized`, unknown or disabled → 403 `forbidden` (DECISIONS.md).
 */
export function priceModule(deps: PriceDeps): RouteModule {
  return {
    name: 'price',
    envelopeFor: priceEnvelopeFor,
    mount(app) {
      const router = express.Router();
      router.use(requireApiKey(deps.resolveKey, { missing: 'unauthorized', invalid: 'forbidden' }));
      router.use(referenceRoutes(deps));
      app.use(PRICE_PREFIX, router);
    },
  };
}
