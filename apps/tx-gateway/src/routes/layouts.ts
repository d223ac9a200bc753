import type { SchemaId } from '@chainpipe/contracts';
import type { ApiRoutes, HttpMethod, RouteHandler, RouteRequest, RouteSpec } from '@chainpipe/http';

/**
 * Declares an operation under its `/tx/api/v1` path and, when the spec names one, under the
 * earlier layout's path (same body and answers; the method may differ, e.g. PATCH → POST).
 */
export function declareOperation<P extends SchemaId = never, Pa extends SchemaId = never, Q extends SchemaId = never, B extends SchemaId = never, C extends boolean = false>(
  api: ApiRoutes,
  spec: RouteSpec<RouteRequest<P, Pa, Q, B, C>>,
  handler: RouteHandler<RouteRequest<P, Pa, Q, B, C>>,
  earlier?: { method?: HttpMethod; path: string; note?: string },
): void {
  api.route(spec, handler);
  if (!earlier) return;
  const summary = `${spec.summary} (earlier layout${earlier.note ? `: ${earlier.note}` : ''})`;
  api.route({ ...spec, method: earlier.method ?? spec.method, path: earlier.path, summary }, handler);
}
