import express, { type RequestHandler } from 'express';
import type { Contracts } from '@chainpipe/contracts';
import { ApiRoutes, msgEnvelope, sendError, type EnvelopeStyle, type RouteRateLimit } from '@chainpipe/http';
import { MSG } from './create-request';
import { ORDER_CREATE_LIMIT, integratorAuthSchemes, orderRoutes } from './routes';
import { orderService, type OrderServiceDeps } from './service';

export interface OrdersModuleDeps extends OrderServiceDeps {
  contracts: Contracts;
  bodyLimitBytes: number;
  /** Order creation's limits (`RateLimits.limit`); unlimited without. */
  orderCreateLimit?: RouteRateLimit;
}

/** The JSON body parser of the order routes: a malformed body is the spec's `invalid request body`. */
function ordersJsonBody(limitBytes: number): RequestHandler {
  const json = express.json({ limit: limitBytes, strict: false, type: () => true });
  return (req, res, next) =>
    json(req, res, (err?: unknown) => {
      if ((err as { type?: string } | undefined)?.type === 'entity.parse.failed') return sendError(res, 400, MSG.invalidBody);
      next(err);
    });
}

const PREFIX = '/api/v1/integrator/';

/**
 * The integrator order endpoints (`/api/v1/integrator/orders…`) as one route module of the
 * aggregator gateway: their own `ApiRoutes` (integrator key schemes, body parser, validation), the
 * spec's `{code, msg, data}` envelope. The gateway app mounts `api.router` and documents `api`.
 */
export function ordersModule(deps: OrdersModuleDeps): { name: string; envelopeFor(path: string): EnvelopeStyle | undefined; api: ApiRoutes } {
  const api = new ApiRoutes({
    contracts: deps.contracts,
    auth: integratorAuthSchemes(deps.db),
    jsonBody: ordersJsonBody(deps.bodyLimitBytes),
    rateLimits: { [ORDER_CREATE_LIMIT]: deps.orderCreateLimit },
  });
  orderRoutes(api, orderService(deps));
  return { name: 'integrator-orders', envelopeFor: (path) => (path.startsWith(PREFIX) ? msgEnvelope : undefined), api };
}
