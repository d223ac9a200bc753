import type { Contracts } from '@chainpipe/contracts';
import { ApiRoutes, msgEnvelope, type EnvelopeStyle, type RouteRateLimit } from '@chainpipe/http';
import { gatewayJsonBody } from '../json-body';
import { ORDER_CREATE_LIMIT, integratorAuthSchemes, orderRoutes } from './routes';
import { orderService, type OrderServiceDeps } from './service';

export interface OrdersModuleDeps extends OrderServiceDeps {
  contracts: Contracts;
  bodyLimitBytes: number;
  /** Order creation's limits (`RateLimits.limit`); unlimited without. */
  orderCreateLimit?: RouteRateLimit;
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
    jsonBody: gatewayJsonBody(deps.bodyLimitBytes),
    rateLimits: { [ORDER_CREATE_LIMIT]: deps.orderCreateLimit },
  });
  orderRoutes(api, orderService(deps));
  return { name: 'integrator-orders', envelopeFor: (path) => (path.startsWith(PREFIX) ? msgEnvelope : undefined), api };
}
