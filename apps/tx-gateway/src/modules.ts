import express from 'express';
import { TOPICS } from '@chainpipe/contracts';
import { ApiRoutes, apiKeyAuth, operatorKeyAuth, type ApiAuth, type ApiRoutesOptions, type EnvelopeStyle, type RouteModule } from '@chainpipe/http';
import { TxQueryRepository } from '@chainpipe/tx-store';
import type { TxGatewayDeps } from './deps';
import { addressesEnvelopeFor, appConfigEnvelopeFor, dexPoolsEnvelopeFor, rpcProxyEnvelopeFor } from './management/envelopes';
import { addressesRoutes } from './routes/addresses';
import { appConfigRoutes } from './routes/app-config';
import { dexPoolsRoutes } from './routes/dex-pools';
import { queriesRoutes } from './routes/queries';
import { RPC_PROXY_LIMIT, rpcProxyRoutes } from './routes/rpc-proxy';
import { websocketRoutes } from './routes/websocket';
import { addressUseCases } from './use-cases/addresses';
import { appConfigUseCases } from './use-cases/app-config';
import { dexPoolUseCases } from './use-cases/dex-pools';
import { queryUseCases } from './use-cases/queries';
import { rpcProxyUseCases } from './use-cases/rpc-proxy';

export type TxGatewayModuleDeps = TxGatewayDeps & { bodyLimitBytes: number };

/** What every module's `ApiRoutes` shares: one scheme name means one scheme in the one API document. */
type SharedApiOptions = Pick<ApiRoutesOptions, 'contracts' | 'jsonBody'> & { auth: Readonly<Record<'apiKey' | 'operatorKey', ApiAuth>> };

/** A route group as a module: its own `ApiRoutes` (the shared schemes and body parser), its envelope by path. */
function routeModule(
  name: string,
  shared: SharedApiOptions,
  envelopeFor: (path: string) => EnvelopeStyle | undefined,
  declare: (api: ApiRoutes) => void,
  rateLimits?: ApiRoutesOptions['rateLimits'],
): RouteModule {
  const api = new ApiRoutes({ ...shared, ...(rateLimits ? { rateLimits } : {}) });
  declare(api);
  return { name, envelopeFor, api };
}

/** The query and push paths answer in the app's default envelope (`msg`). */
const defaultEnvelope = () => undefined;

/**
 * The address monitoring API as route modules, each route group over its use-cases: history
 * queries, monitored addresses, push configuration, the RPC proxy, the WebSocket endpoints (for
 * the document; upgrades are the server's) and pool trades. Every route is declared under both
 * path layouts the spec names (`/tx/api/v1/...` and the earlier `/api/v1/...`) behind `X-API-Key`
 * (the RPC proxy too: it spends our node quota). The order is the routing order: a query path is
 * matched before the WebSocket one.
 */
export function txGatewayModules(deps: TxGatewayModuleDeps): RouteModule[] {
  const shared: SharedApiOptions = {
    contracts: deps.contracts,
    // Authentication runs before the body is read: a caller without a key costs us no parsing.
    // Shared resources (the DEX pools of the trades queues) need an operator's key (D171).
    auth: { apiKey: apiKeyAuth(deps.resolveKey), operatorKey: operatorKeyAuth(deps.resolveKey, { forbidden: { message: 'operator key required' } }) },
    jsonBody: express.json({ limit: deps.bodyLimitBytes, strict: false, type: () => true }),
  };
  const queries = queryUseCases({
    ...deps,
    transactions: new TxQueryRepository(deps.db),
    publishFetched: async (message) => void (await deps.producer.publish(TOPICS.chainFetched, [{ value: message }])),
  });
  const addresses = addressUseCases({
    ...deps,
    publishChanges: async (messages) => void (await deps.producer.publish(TOPICS.addressesChanges, messages.map((value) => ({ value })))),
  });
  const rpcProxy = rpcProxyUseCases({ ...deps.rpcProxy, rpcTimeoutMs: deps.rpcTimeoutMs, logger: deps.logger, registry: deps.registry });
  return [
    // Query endpoints (list and V2 formats) use `msg`; addresses, app config and pool trades `message`.
    routeModule('transaction-queries', shared, defaultEnvelope, (api) => queriesRoutes(api, queries)),
    routeModule('monitored-addresses', shared, addressesEnvelopeFor, (api) => addressesRoutes(api, addresses)),
    routeModule('push-configuration', shared, appConfigEnvelopeFor, (api) => appConfigRoutes(api, appConfigUseCases(deps))),
    routeModule('rpc-proxy', shared, rpcProxyEnvelopeFor, (api) => rpcProxyRoutes(api, rpcProxy), { [RPC_PROXY_LIMIT]: deps.rpcProxyLimit }),
    routeModule('websocket-push', shared, defaultEnvelope, (api) => websocketRoutes(api)),
    routeModule('pool-trades', shared, dexPoolsEnvelopeFor, (api) => dexPoolsRoutes(api, dexPoolUseCases(deps))),
  ];
}
