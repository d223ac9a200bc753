import express, { type Express } from 'express';
import { createHttpApp, finishHttpApp, msgEnvelope, requireApiKey } from '@chainpipe/http';
import type { TxGatewayDeps } from './deps';
import { managementEnvelopeFor } from './management/envelopes';
import { addressesRoutes } from './routes/addresses';
import { appConfigRoutes } from './routes/app-config';
import { queriesRoutes } from './routes/queries';
import { rpcProxyRoutes } from './routes/rpc-proxy';

/**
 * The address monitoring API. Every route group mounts itself under both path layouts the spec
 * names (`/tx/api/v1/...` and the earlier `/api/v1/...`), sets its own envelope style and sits
 * behind `X-API-Key` (the RPC proxy too: it spends our node quota).
 */
export function createTxGatewayApp(deps: TxGatewayDeps & { timeoutMs: number; bodyLimitBytes: number }): Express {
  // Query endpoints (list and V2 formats) use `msg`; addresses and app config use `message`.
  const app = createHttpApp({ logger: deps.logger, registry: deps.registry, defaultEnvelope: msgEnvelope, envelopeFor: managementEnvelopeFor, timeoutMs: deps.timeoutMs });
  // Authenticate before reading bodies: a caller without a key costs us no parsing.
  app.use(requireApiKey(deps.resolveKey));
  app.use(express.json({ limit: deps.bodyLimitBytes, strict: false, type: () => true }));
  app.use(queriesRoutes(deps));
  app.use(addressesRoutes(deps));
  app.use(appConfigRoutes(deps));
  app.use(rpcProxyRoutes(deps));
  finishHttpApp(app, deps.logger);
  return app;
}
