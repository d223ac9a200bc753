import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { Gauge, type Registry } from 'prom-client';
import { type Clock, systemClock } from './clock';
import { errorMessage } from './errors';

/**
 * The rule every component follows:
 * - `error`: broken in a way a restart cures (a wedged loop, a client that gave up). Fails
 *   liveness (`/healthz` 503), so the orchestrator restarts the process.
 * - `degraded`: cannot serve now, but a restart would not help (a dependency is down or still
 *   connecting, a consumer rejoining its group). Fails readiness only (`/readyz` 503): traffic
 *   goes elsewhere until it is `ok` again, which it becomes by itself.
 * - `ok`: serving.
 */
export type HealthState = 'ok' | 'degraded' | 'error';

/**
 * Routes an app serves on its ops listener besides /metrics, /healthz and /readyz (the
 * candlestick debug routes when a deployment keeps them off the public port): the paths it
 * takes, and the handler (any method) that answers them.
 */
export interface OpsRoute {
  matches(path: string): boolean;
  handle: http.RequestListener;
}

export interface HealthReport {
  state: HealthState;
  detail?: string;
}

/**
 * A long-lived part of an app (a database pool, a consumer, an HTTP server). Components are
 * stopped in the reverse order they were added: an app adds its connections first and its
 * entry points last, so on shutdown it stops taking work before it closes what the work uses.
 */
export interface Component {
  name: string;
  /** Liveness: `error` makes /healthz fail. Omitted means always ok. */
  health?(): HealthReport | HealthState;
  /** Readiness: false makes /readyz fail. Omitted means ready while `health` is `ok`. */
  ready?(): boolean;
  stop?(): Promise<void>;
}

export interface LifecycleOptions {
  logger: Logger;
  /** Hard deadline for the whole shutdown; past it the process exits 1. */
  shutdownTimeoutMs?: number;
  /** Injected for tests; the real one exits the process. */
  exit?: (code: number) => void;
  /** Time of the shutdown deadline and of each component's stop. */
  clock?: Pick<Clock, 'now' | 'setTimeout'>;
}

function normalize(h: HealthReport | HealthState | undefined): HealthReport {
  if (!h) return { state: 'ok' };
  return typeof h === 'string' ? { state: h } : h;
}

/**
 * Process lifecycle: component registry, `/healthz` `/readyz` `/metrics` on an ops port, signal
 * handling and a shutdown in a fixed order with a deadline. A crash (uncaught exception,
 * unhandled rejection, a component calling `fail`) shuts down the same way and exits non-zero.
 */
export class Lifecycle {
  private readonly components: Component[] = [];
  private readonly logger: Logger;
  private readonly shutdownTimeoutMs: number;
  private readonly exit: (code: number) => void;
  private readonly clock: Pick<Clock, 'now' | 'setTimeout'>;
  private opsServer?: http.Server;
  private started = false;
  /** Set before anything stops, so readiness is false for the whole shutdown. */
  private stopRequested = false;
  private stopping?: Promise<void>;

  constructor(opts: LifecycleOptions) {
    this.logger = opts.logger;
    this.shutdownTimeoutMs = opts.shutdownTimeoutMs ?? 25_000;
    this.exit = opts.exit ?? ((code) => process.exit(code));
    this.clock = opts.clock ?? systemClock;
  }

  add<C extends Component>(component: C): C {
    this.components.push(component);
    return component;
  }

  get isStopping(): boolean {
    return this.stopRequested;
  }

  /** Called by main once every component has started. */
  markStarted(): void {
    this.started = true;
  }

  health(): { state: HealthState; components: Record<string, HealthReport> } {
    const components: Record<string, HealthReport> = {};
    let state: HealthState = 'ok';
    for (const c of this.components) {
      const h = normalize(c.health?.());
      components[c.name] = h;
      if (h.state === 'error') state = 'error';
      else if (h.state === 'degraded' && state === 'ok') state = 'degraded';
    }
    return { state, components };
  }

  readiness(): { ready: boolean; components: Record<string, boolean> } {
    const components: Record<string, boolean> = {};
    let ready = this.started && !this.isStopping;
    for (const c of this.components) {
      const r = c.ready ? c.ready() : normalize(c.health?.()).state === 'ok';
      components[c.name] = r;
      if (!r) ready = false;
    }
    return { ready, components };
  }

  /** Serves /metrics, /healthz and /readyz; never on a public port. */
  async serveOps(opts: { host: string; port: number; registry: Registry; routes?: readonly OpsRoute[] }): Promise<AddressInfo> {
    // Readiness as a metric too, read at scrape time: an alert can tell "up but not serving"
    // (a dependency down, a consumer rejoining) from "down" (Prometheus' own `up`).
    const isReady = () => this.readiness().ready;
    if (!opts.registry.getSingleMetric('chainpipe_ready')) {
      new Gauge({
        name: 'chainpipe_ready',
        help: '1 while /readyz answers 200, 0 while it answers 503',
        registers: [opts.registry],
        collect() {
          this.set(isReady() ? 1 : 0);
        },
      });
    }
    const server = http.createServer((req, res) => {
      const path = (req.url ?? '/').split('?')[0];
      const send = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      const route = opts.routes?.find((r) => r.matches(path));
      if (route) return route.handle(req, res);
      if (req.method !== 'GET') return send(405, { error: 'method not allowed' });
      if (path === '/healthz') {
        const h = this.health();
        return send(h.state === 'error' ? 503 : 200, h);
      }
      if (path === '/readyz') {
        const r = this.readiness();
        return send(r.ready ? 200 : 503, r);
      }
      if (path === '/metrics') {
        opts.registry
          .metrics()
          .then((text) => {
            res.writeHead(200, { 'content-type': opts.registry.contentType });
            res.end(text);
          })
          .catch((err) => send(500, { error: errorMessage(err) }));
        return;
      }
      send(404, { error: 'not found' });
    });
    server.keepAliveTimeout = 5_000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(opts.port, opts.host, () => resolve());
    });
    this.opsServer = server;
    return server.address() as AddressInfo;
  }

  /** SIGTERM/SIGINT shut down cleanly (exit 0); a crash shuts down and exits 1. */
  installProcessHandlers(): void {
    const onSignal = (signal: NodeJS.Signals) => void this.shutdown(`signal ${signal}`);
    process.once('SIGTERM', onSignal);
    process.once('SIGINT', onSignal);
    process.on('uncaughtException', (err) => void this.shutdown('uncaught exception', err));
    process.on('unhandledRejection', (err) => void this.shutdown('unhandled rejection', err));
  }

  /** For components whose background loop died: the app cannot do its job, so it stops. */
  fail(reason: string, error: unknown): void {
    void this.shutdown(reason, error);
  }

  /**
   * Stops components in reverse order of registration, each awaited, under one deadline.
   * Idempotent: a second call returns the first shutdown's promise.
   */
  shutdown(reason: string, error?: unknown): Promise<void> {
    if (this.stopping) return this.stopping;
    this.stopRequested = true;
    const log = this.logger;
    if (error) log.error({ msg: 'shutdown_on_error', reason, err: error });
    else log.info({ msg: 'shutdown_started', reason });
    const deadline = this.clock
      .setTimeout(() => {
        log.error({ msg: 'shutdown_deadline_exceeded', timeoutMs: this.shutdownTimeoutMs });
        this.exit(1);
      }, this.shutdownTimeoutMs)
      .unref();
    this.stopping = (async () => {
      let failed = Boolean(error);
      for (const c of [...this.components].reverse()) {
        if (!c.stop) continue;
        const t0 = this.clock.now();
        try {
          await c.stop();
          log.info({ msg: 'component_stopped', component: c.name, ms: this.clock.now() - t0 });
        } catch (err) {
          failed = true;
          log.error({ msg: 'component_stop_failed', component: c.name, err });
        }
      }
      if (this.opsServer) {
        this.opsServer.closeAllConnections();
        await new Promise<void>((resolve) => this.opsServer!.close(() => resolve()));
      }
      deadline.cancel();
      log.info({ msg: 'shutdown_complete', exitCode: failed ? 1 : 0 });
      // pino writes asynchronously to stdout only with a transport; flush what is buffered.
      log.flush?.();
      this.exit(failed ? 1 : 0);
    })();
    return this.stopping;
  }
}
