import type { RequestHandler } from 'express';
import type { ApiRoutes, HttpMethod, RouteSpec } from '@chainpipe/http';

/**
 * Declares an operation under its `/tx/api/v1` path and, when the spec names one, under the
 * earlier layout's path (same body and answers; the method may differ, e.g. PATCH → POST).
 */
export function declareOperation(api: ApiRoutes, spec: RouteSpec, handler: RequestHandler, earlier?: { method?: HttpMethod; path: string; note?: string }): void {
  api.route(spec, handler);
  if (!earlier) return;
  const summary = `${spec.summary} (earlier layout${earlier.note ? `: ${earlier.note}` : ''})`;
  api.route({ ...spec, method: earlier.method ?? spec.method, path: earlier.path, summary }, handler);
}
