import express, { type Express } from 'express';
import { TX_GATEWAY_ASYNC_INFO, TX_GATEWAY_CHANNELS, asyncApiDocument } from '@chainpipe/contracts';
import { ApiRoutes, apiKeyAuth, createHttpApp, finishHttpApp, msgEnvelope, operatorKeyAuth, serveApiDocs, serveExactRoutes } from '@chainpipe/http';
import type { TxGatewayDeps } from './deps';
import { managementEnvelopeFor } from './management/envelopes';
import { addressesRoutes } from './routes/addresses';
import { appConfigRoutes } from './routes/app-config';
import { dexPoolsRoutes } from './routes/dex-pools';
import { queriesRoutes } from './routes/queries';
import { RPC_PROXY_LIMIT, rpcProxyRoutes } from './routes/rpc-proxy';
import { websocketRoutes } from './routes/websocket';

export const TX_GATEWAY_API = {
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
 * The address monitoring API. Every route group declares its routes under both path layouts the
 * spec names (`/tx/api/v1/...` and the earlier `/api/v1/...`), in its own envelope style, behind
 * `X-API-Key` (the RPC proxy too: it spends our node quota). `/openapi.json` and `/docs` are
 * generated from the same declarations and need no key.
 */
export function createTxGatewayApp(deps: TxGatewayDeps & { timeoutMs: number; bodyLimitBytes: number }): Express {
  // Query endpoints (list and V2 formats) use `msg`; addresses and app config use `message`.
  const app = createHttpApp({ logger: deps.logger, registry: deps.registry, defaultEnvelope: msgEnvelope, envelopeFor: managementEnvelopeFor, timeoutMs: deps.timeoutMs });
  const api = new ApiRoutes({
    contracts: deps.contracts,
    // Authentication runs before the body is read: a caller without a key costs us no parsing.
    // Shared resources (the DEX pools of the trades queues) need an operator's key (D171).
    auth: { apiKey: apiKeyAuth(deps.resolveKey), operatorKey: operatorKeyAuth(deps.resolveKey, { forbidden: { message: 'operator key required' } }) },
    jsonBody: express.json({ limit: deps.bodyLimitBytes, strict: false, type: () => true }),
    rateLimits: { [RPC_PROXY_LIMIT]: deps.rpcProxyLimit },
  });
  queriesRoutes(api, deps);
  addressesRoutes(api, deps);
  appConfigRoutes(api, deps);
  rpcProxyRoutes(api, deps);
  websocketRoutes(api);
  dexPoolsRoutes(api, deps);
  serveExactRoutes(app, [api]);
  app.use(api.router);
  serveApiDocs(app, api, TX_GATEWAY_API, { asyncApi: asyncApiDocument(deps.contracts, TX_GATEWAY_CHANNELS, TX_GATEWAY_ASYNC_INFO) });
  finishHttpApp(app, deps.logger);
  return app;
}
