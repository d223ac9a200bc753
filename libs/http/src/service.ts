import type { Express } from 'express';
import { int, publicPort, str, type PublicAppName, type ServiceHost } from '@chainpipe/runtime';
import { listen, type StartedServer } from './app';

/** The public HTTP server of an app: host, port (default from the port table) and request deadline. */
export function httpServerConfig(app: PublicAppName) {
  return {
    HOST: str({ default: '127.0.0.1', doc: 'interface of the public port' }),
    PORT: int({ default: publicPort(app), min: 0, max: 65535, doc: 'public port (default: the app\'s row of the port table)' }),
    REQUEST_TIMEOUT_MS: int({ default: 15_000, min: 100, doc: 'a request running longer gets 504' }),
  };
}

export interface HttpServerConfig {
  HOST: string;
  PORT: number;
}

/**
 * Registers the app's public HTTP server as an entry point: it listens once the app is wired and,
 * on shutdown, stops accepting and finishes in-flight requests before any connection closes.
 */
export function addHttpServer(svc: ServiceHost<HttpServerConfig>, app: Express, name = 'http'): { server(): StartedServer | undefined } {
  let started: StartedServer | undefined;
  svc.serve({
    name,
    start: async () => {
      started = await listen(app, svc.config.PORT, svc.config.HOST);
      return { port: started.address.port };
    },
    stop: async () => {
      await started?.close();
    },
  });
  return { server: () => started };
}
