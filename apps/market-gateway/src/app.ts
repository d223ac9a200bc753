import type { Express } from 'express';
import type { Registry } from 'prom-client';
import { createHttpApp, finishHttpApp, msgEnvelope } from '@chainpipe/http';
import type { Logger } from '@chainpipe/runtime';
import type { RouteModule } from './route-module';

export interface MarketGatewayOptions {
  logger: Logger;
  registry: Registry;
  timeoutMs: number;
  /** Token price (`/price/api/v1`) and candlestick (`/kline/api/v1`, `/api/v1`) modules. */
  modules: readonly RouteModule[];
}

/**
 * The market data gateway: one express app composed of route modules. Each path's envelope is
 * decided by the module that owns it before anything runs, so auth failures, malformed bodies
 * and timeouts answer in that service's style.
 */
export function createMarketGatewayApp(opts: MarketGatewayOptions): Express {
  const envelopeFor = (path: string) => {
    for (const m of opts.modules) {
      const style = m.envelopeFor(path);
      if (style) return style;
    }
    return undefined;
  };
  const app = createHttpApp({ logger: opts.logger, registry: opts.registry, defaultEnvelope: msgEnvelope, envelopeFor, timeoutMs: opts.timeoutMs });
  for (const m of opts.modules) m.mount(app);
  finishHttpApp(app, opts.logger);
  return app;
}
