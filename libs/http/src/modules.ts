import type { Express } from 'express';
import type { Registry } from 'prom-client';
import type { Clock, Logger } from '@chainpipe/runtime';
import type { ApiRoutes } from './api-routes';
import { serveApiDocs } from './api-docs';
import { createHttpApp, finishHttpApp, serveExactRoutes } from './app';
import { msgEnvelope, type EnvelopeStyle } from './envelope';
import type { ApiInfo } from './openapi';

/**
 * One service's part of a gateway (the token price and candlestick services of the market
 * gateway, the quotes and integrator orders of the aggregator gateway): its envelope by path and
 * its routes, declared through an `ApiRoutes` of its own (its auth schemes, body parser and
 * validation answers), so each part keeps the rules its spec gives it.
 */
export interface RouteModule {
  name: string;
  /** The envelope of a path this module serves; undefined for paths it does not own. */
  envelopeFor(path: string): EnvelopeStyle | undefined;
  api: ApiRoutes;
}

export interface ModularAppOptions {
  logger: Logger;
  registry: Registry;
  timeoutMs: number;
  /** Time of the request deadline. */
  clock?: Pick<Clock, 'setTimeout'>;
  modules: readonly RouteModule[];
  /** The OpenAPI document's title, version, description and tags. */
  info: ApiInfo;
  /** The app's asynchronous channels (AsyncAPI), served at `/asyncapi.json`. */
  asyncApi?: object;
}

/**
 * A gateway composed of route modules: one express app, each path answered in the envelope of
 * the module that owns it (decided before anything runs, so auth failures, malformed bodies and
 * timeouts use it too), and one API document of every module's routes. Routes without path
 * parameters are served from a table before express (`serveExactRoutes`).
 */
export function createModularApp(opts: ModularAppOptions): Express {
  const envelopeFor = (path: string) => {
    for (const m of opts.modules) {
      const style = m.envelopeFor(path);
      if (style) return style;
    }
    return undefined;
  };
  const app = createHttpApp({ logger: opts.logger, registry: opts.registry, defaultEnvelope: msgEnvelope, envelopeFor, timeoutMs: opts.timeoutMs, clock: opts.clock });
  serveExactRoutes(app, opts.modules.map((m) => m.api));
  for (const m of opts.modules) app.use(m.api.router);
  serveApiDocs(
    app,
    opts.modules.map((m) => m.api),
    opts.info,
    opts.asyncApi ? { asyncApi: opts.asyncApi } : {},
  );
  finishHttpApp(app, opts.logger);
  return app;
}
