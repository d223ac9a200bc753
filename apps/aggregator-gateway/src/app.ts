import type { Express } from 'express';
import type { Registry } from 'prom-client';
import { AGGREGATOR_GATEWAY_ASYNC_INFO, AGGREGATOR_GATEWAY_CHANNELS, asyncApiDocument } from '@chainpipe/contracts';
import { createModularApp, type ApiInfo, type RouteModule } from '@chainpipe/http';
import type { Clock, Logger } from '@chainpipe/runtime';

export type { RouteModule };

export interface AggregatorGatewayOptions {
  logger: Logger;
  registry: Registry;
  timeoutMs: number;
  /** Time of the request deadline. */
  clock?: Pick<Clock, 'setTimeout'>;
  modules: readonly RouteModule[];
}

export const AGGREGATOR_GATEWAY_API: ApiInfo = {
  title: 'chainpipe aggregator integrator API',
  version: '1.0.0',
  description:
    'Cross-chain swap quotes streamed over SSE (`/api/v2/quote/stream`, no key) and orders of integrators (`/api/v1/integrator/orders`: creation with commission by integrator key, order read, refund requests). Envelope `{code, msg, data}`.',
  tags: [
    { name: 'quotes', description: 'one SSE event per channel quote' },
    { name: 'integrator orders', description: 'deposit-address orders, their state and refunds' },
  ],
};

/** The aggregator gateway: the quote stream and integrator order modules, one API document. */
export function createAggregatorGatewayApp(opts: AggregatorGatewayOptions): Express {
  return createModularApp({
    ...opts,
    info: AGGREGATOR_GATEWAY_API,
    asyncApi: asyncApiDocument(opts.modules[0].api.options.contracts, AGGREGATOR_GATEWAY_CHANNELS, AGGREGATOR_GATEWAY_ASYNC_INFO),
  });
}
