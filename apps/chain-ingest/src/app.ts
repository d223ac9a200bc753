import type { Express } from 'express';
import { createHttpApp, finishHttpApp, messageEnvelope, serveApiDocs } from '@chainpipe/http';
import { ingestRoutes, type IngestDeps } from './ingest.routes';

export const CHAIN_INGEST_API = {
  title: 'chainpipe chain data ingestion',
  version: '1.0.0',
  description: 'Streamers post raw chain data here; it is published to the chain.raw.v1 topic. Served under `/` and `/tx/api/v1`.',
  tags: [{ name: 'ingestion', description: 'raw chain data in, chain.raw.v1 out' }],
};

export function createIngestApp(deps: IngestDeps & { timeoutMs: number }): Express {
  const app = createHttpApp({ logger: deps.logger, registry: deps.registry, defaultEnvelope: messageEnvelope, timeoutMs: deps.timeoutMs });
  const api = ingestRoutes(deps);
  app.use(api.router);
  serveApiDocs(app, api, CHAIN_INGEST_API);
  finishHttpApp(app, deps.logger);
  return app;
}
