import type { Registry } from 'prom-client';
import type { BaseConfig } from './base-config';
import { int, type ConfigOf, type Section } from './config';
import { bootApp, runMain, type BootOptions } from './boot';
import type { Component, Lifecycle, OpsRoute } from './lifecycle';
import type { Logger } from './logger';
import { appPorts } from './ports';

/**
 * Where work enters an app: an HTTP server, a Kafka consumer. Entry points start only once the
 * whole app is wired (every connection they use is open) and stop before any connection closes.
 */
export interface EntryPoint extends Component {
  /** Starts taking work; what it returns goes into the `started` log line (a port, a group). */
  start?(): Promise<Record<string, unknown> | void>;
}

/**
 * What the service kit's helpers (`addPostgres`, `addRedis`, `addKafka`, `addHttpServer`) need
 * from an app: its name, validated config, logger, metrics and lifecycle, and the two ways to
 * register a part in the right shutdown order.
 */
export interface ServiceHost<C> {
  readonly name: string;
  readonly config: C;
  readonly logger: Logger;
  readonly registry: Registry;
  readonly lifecycle: Lifecycle;
  /** A connection the app's work uses (pool, client, producer): stopped after every entry point. */
  use<T extends Component>(component: T): T;
  /** An entry point: started after wiring, in the order registered; stopped first, in reverse. */
  serve<T extends EntryPoint>(entry: T): T;
  /** Routes served on the ops listener (never a public port) besides its own three. */
  serveOnOps(route: OpsRoute): void;
}

export type Service<S extends Section> = ServiceHost<ConfigOf<S> & BaseConfig>;

/**
 * Boots an app (config, logger, metrics, lifecycle, signal handlers), lets `wire` open its
 * connections and register its entry points, then starts the entry points, serves the ops port
 * and marks the app ready. The ops port defaults to the app's row of the port table.
 */
export async function startService<S extends Section>(
  name: string,
  section: S,
  wire: (svc: Service<S>) => Promise<void> | void,
  opts: BootOptions = {},
): Promise<Service<S>> {
  const { config, logger, registry, lifecycle } = bootApp(name, serviceSection(name, section), opts);
  const entries: EntryPoint[] = [];
  const opsRoutes: OpsRoute[] = [];
  const svc: Service<S> = {
    name,
    config,
    logger,
    registry,
    lifecycle,
    use: (component) => lifecycle.add(component),
    serve: (entry) => {
      entries.push(entry);
      return entry;
    },
    serveOnOps: (route) => void opsRoutes.push(route),
  };
  await wire(svc);
  const facts: Record<string, unknown> = {};
  for (const entry of entries) {
    // Registered before it starts: a shutdown during start still stops it.
    lifecycle.add(entry);
    Object.assign(facts, await entry.start?.());
  }
  const ops = await lifecycle.serveOps({ host: config.OPS_HOST, port: config.OPS_PORT, registry, routes: opsRoutes });
  lifecycle.markStarted();
  logger.info({ msg: 'started', ...facts, opsPort: ops.port });
  return svc;
}

/** The section a service validates besides baseConfig: its own, with OPS_PORT defaulting to its row of the port table. */
export function serviceSection<S extends Section>(name: string, section: S): S {
  const ports = appPorts(name);
  return (ports ? { OPS_PORT: int({ default: ports.ops, min: 0, max: 65535, doc: 'port of /metrics, /healthz, /readyz' }), ...section } : section) as S;
}

/** An app's whole `main.ts`: `runService('my-app', myConfig, async (svc) => { … })`. */
export function runService<S extends Section>(name: string, section: S, wire: (svc: Service<S>) => Promise<void> | void): void {
  runMain(async () => {
    await startService(name, section, wire);
  });
}
