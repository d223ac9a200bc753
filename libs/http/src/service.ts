import type { IncomingMessage, RequestListener } from 'node:http';
import type { Express } from 'express';
import { int, publicPort, str, type PublicAppName, type ServiceHost } from '@chainpipe/runtime';
import { listen, type StartedServer } from './app';
import { routeUpgrades, type UpgradeHandler } from './websocket';

/** Requests that reached the app through its ops listener (`opsListener`), not its public port. */
const VIA_OPS = new WeakSet<IncomingMessage>();

/**
 * The app as a handler of its ops listener (`ServiceHost.serveOnOps`): the same routes, and each
 * request known to have come that way (`cameViaOps`), so a route can refuse the public port.
 */
export function opsListener(app: Express): RequestListener {
  return (req, res) => {
    VIA_OPS.add(req);
    app(req, res);
  };
}

/** Whether a request came through the ops listener (never a public port). */
export function cameViaOps(req: IncomingMessage): boolean {
  return VIA_OPS.has(req);
}

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

/** The app's public HTTP server, once started, and the WebSocket endpoints it routes upgrades to. */
export interface HttpServerHandle {
  server(): StartedServer | undefined;
  /**
   * Adds a WebSocket endpoint: upgrade requests go to the handlers in the order they were added,
   * the first that takes one; one that none takes is refused with 404. Add before the app starts.
   */
  upgrade(handler: UpgradeHandler): void;
}

/**
 * Registers the app's public HTTP server as an entry point: it listens once the app is wired and,
 * on shutdown, stops accepting and finishes in-flight requests before any connection closes.
 */
export function addHttpServer(svc: ServiceHost<HttpServerConfig>, app: Express, name = 'http'): HttpServerHandle {
  let started: StartedServer | undefined;
  const upgrades: UpgradeHandler[] = [];
  svc.serve({
    name,
    start: async () => {
      started = await listen(app, svc.config.PORT, svc.config.HOST);
      routeUpgrades(started.server, upgrades);
      return { port: started.address.port };
    },
    stop: async () => {
      await started?.close();
    },
  });
  return { server: () => started, upgrade: (handler) => void upgrades.push(handler) };
}
