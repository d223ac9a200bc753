import type { Express } from 'express';
import type { Registry } from 'prom-client';
import { TX_GATEWAY_ASYNC_INFO, TX_GATEWAY_CHANNELS, asyncApiDocument } from '@chainpipe/contracts';
import { createModularApp, type ApiInfo, type RouteModule } from '@chainpipe/http';
import type { Logger } from '@chainpipe/runtime';

export interface TxGatewayOptions {
  logger: Logger;
  registry: Registry;
  timeoutMs: number;
  /** The route modules in routing order (`txGatewayModules`). */
  modules: readonly RouteModule[];
}

export const TX_GATEWAY_API: ApiInfo = {
  title: 'chainpipe address monitoring API',
  version: '1.0.0',
  description:
    'History queries, monitored addresses, push configuration and the chain RPC proxy. Every operation is served under `/tx/api/v1/...` and the earlier `/api/v1/...` layout; every route needs `X-API-Key`, and registering or removing a DEX pool an operator key.',
  tags: [
    { name: 'transaction queries', description: 'history of an address, newest first, paged by cursor (`id`)' },
    { name: 'monitored addresses', description: 'the addresses whose transactions are pushed to the application' },
    { name: 'push configuration', description: 'WebSocket and webhook settings of the application' },
    { name: 'rpc proxy', description: 'one JSON-RPC call forwarded to a chain node' },
    { name: 'push', description: 'WebSocket push of matched transactions' },
    { name: 'pool trades', description: 'recent trades of registered DEX pools' },
  ],
};

/**
 * The address monitoring API: its route modules, each path answered in its module's envelope
 * (`msg` by default), one API document. `/openapi.json` and `/docs` are generated from the same
 * declarations and need no key. WebSocket upgrades are answered on the server (push/ws-hub).
 */
export function createTxGatewayApp(opts: TxGatewayOptions): Express {
  return createModularApp({
    ...opts,
    info: TX_GATEWAY_API,
    // The schemas the routes were declared with describe the WebSocket messages too.
    asyncApi: asyncApiDocument(opts.modules[0].api.options.contracts, TX_GATEWAY_CHANNELS, TX_GATEWAY_ASYNC_INFO),
  });
}
