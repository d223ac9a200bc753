import type { Express } from 'express';
import type { Registry } from 'prom-client';
import { createHttpApp, finishHttpApp, msgEnvelope, serveApiDocs, type ApiInfo, type ApiRoutes, type EnvelopeStyle } from '@chainpipe/http';
import type { Logger } from '@chainpipe/runtime';

/** One part of the gateway: its routes, declared through an `ApiRoutes` of its own, and its envelope by path. */
export interface RouteModule {
  name: string;
  envelopeFor(path: string): EnvelopeStyle | undefined;
  api: ApiRoutes;
}

export interface AggregatorGatewayOptions {
  logger: Logger;
  registry: Registry;
  timeoutMs: number;
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

/** The aggregator gateway: one express app composed of route modules, one API document. */
export function createAggregatorGatewayApp(opts: AggregatorGatewayOptions): Express {
  const envelopeFor = (path: string) => {
    for (const m of opts.modules) {
      const style = m.envelopeFor(path);
      if (style) return style;
    }
    return undefined;
  };
  const app = createHttpApp({ logger: opts.logger, registry: opts.registry, defaultEnvelope: msgEnvelope, envelopeFor, timeoutMs: opts.timeoutMs });
  for (const m of opts.modules) app.use(m.api.router);
  serveApiDocs(
    app,
    opts.modules.map((m) => m.api),
    AGGREGATOR_GATEWAY_API,
  );
  finishHttpApp(app, opts.logger);
  return app;
}
