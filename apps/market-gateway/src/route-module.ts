import type { ApiRoutes, EnvelopeStyle } from '@chainpipe/http';

/**
 * One service's part of the market gateway (token prices, candlesticks): its envelope by path
 * and its routes, declared through an `ApiRoutes` of its own (its auth schemes, body parser and
 * validation answers). `app.ts` composes them into one app and one API document; each module
 * brings its own authentication, so the spec's per-service rules (codes, envelopes, which routes
 * need a key) stay inside the module.
 */
export interface RouteModule {
  name: string;
  /** The envelope of a path this module serves; undefined for paths it does not own. */
  envelopeFor(path: string): EnvelopeStyle | undefined;
  api: ApiRoutes;
}
