import type { Express } from 'express';
import { createHttpApp, finishHttpApp, messageEnvelope } from '@chainpipe/http';
import { ingestRouter, type IngestDeps } from './ingest.routes';

export function createIngestApp(deps: IngestDeps & { timeoutMs: number }): Express {
  const app = createHttpApp({ logger: deps.logger, registry: deps.registry, defaultEnvelope: messageEnvelope, timeoutMs: deps.timeoutMs });
  app.use(ingestRouter(deps));
  finishHttpApp(app, deps.logger);
  return app;
}
