/**
 * Compiled by the typecheck (`tsc`), never run: handlers are typed from the schemas their route
 * names, so a handler that reads a field its schema lacks, or reads a field as another type, fails
 * the typecheck. Each `@ts-expect-error` must meet an error: a typing that let the mistake through
 * would fail the typecheck as well.
 */
import type { RequestHandler } from 'express';
import { requestParams, type ApiRoutes, type HandlerFor } from '@chainpipe/http';

const ok = { data: { const: 'success' }, description: 'done' };

export function routesWithMistakes(api: ApiRoutes): void {
  api.route({ method: 'post', path: '/body', summary: 'body', auth: 'none', request: { body: 'http/tx/dex-pool-register' }, ok }, (req) => {
    const pool: string = req.body.poolAddress;
    const chainId: number | string = req.body.chainId;
    // @ts-expect-error http/tx/dex-pool-register has no `pool_address`
    const missing: unknown = req.body.pool_address;
    // @ts-expect-error `poolAddress` is a string
    const wrongType: number = req.body.poolAddress;
    void [pool, chainId, missing, wrongType];
  });

  api.route({ method: 'get', path: '/orders/:orderNo', summary: 'params', auth: 'none', request: { params: 'http/agg/integrator-order-params' }, ok }, (_req, res) => {
    const orderNo: string = requestParams(res).orderNo;
    // @ts-expect-error http/agg/integrator-order-params has no `order_no`
    const missing: unknown = requestParams(res).order_no;
    void [orderNo, missing];
  });

  api.route({ method: 'get', path: '/query', summary: 'query', auth: 'none', request: { query: 'http/kline/ohlcv-query' }, ok }, (_req, res) => {
    const interval: '1s' | '1m' | '15m' | '1h' | '4h' | '1d' | '1w' | '1M' | '1Y' = requestParams(res).interval;
    // @ts-expect-error query parameters arrive as strings
    const limit: number | undefined = requestParams(res).limit;
    void [interval, limit];
  });

  // A handler declared apart from its route, for another body than the route's.
  const forRpc: HandlerFor<{ body: 'http/tx/rpc-proxy' }> = (req) => void req.body.method;
  // @ts-expect-error the route's body is http/tx/dex-pool-register, not the handler's http/tx/rpc-proxy
  api.route({ method: 'post', path: '/other', summary: 'other', auth: 'none', request: { body: 'http/tx/dex-pool-register' }, ok }, forRpc);

  // requestParams outside a typed route handler is refused rather than an unchecked cast.
  const loose: RequestHandler = (_req, res) => {
    // @ts-expect-error an untyped response carries no route's parameters
    void requestParams(res);
  };
  void loose;

  // @ts-expect-error an id that names no schema
  api.route({ method: 'post', path: '/nope', summary: 'nope', auth: 'none', request: { body: 'http/tx/nope' }, ok }, () => undefined);
}
