import type { Registry } from 'prom-client';
import { baseConfig, type BaseConfig } from './base-config';
import { ConfigError, describeConfig, loadConfig, type ConfigOf, type Section } from './config';
import { Lifecycle } from './lifecycle';
import { createLogger, type Logger } from './logger';
import { createMetricsRegistry } from './metrics';

export interface AppContext<S extends Section> {
  config: ConfigOf<S> & BaseConfig;
  logger: Logger;
  registry: Registry;
  lifecycle: Lifecycle;
}

/**
 * What every app does first: validate its whole config (base + its sections), make its logger,
 * metrics registry and lifecycle, and install signal handlers. Throws ConfigError listing every
 * bad variable.
 */
export interface BootOptions {
  env?: Record<string, string | undefined>;
  /** Injected by tests: the lifecycle calls it instead of exiting, and no process handlers are installed. */
  exit?: (code: number) => void;
}

export function bootApp<S extends Section>(name: string, section: S, opts: BootOptions = {}): AppContext<S> {
  const env = opts.env ?? process.env;
  const full = { ...baseConfig, ...section };
  const config = loadConfig(full, env) as ConfigOf<S> & BaseConfig;
  const logger = createLogger({ name, level: config.LOG_LEVEL, pretty: config.LOG_PRETTY });
  logger.info({ msg: 'config_loaded', config: describeConfig(full, config as never) });
  const registry = createMetricsRegistry(name);
  const lifecycle = new Lifecycle({ logger, shutdownTimeoutMs: config.SHUTDOWN_TIMEOUT_MS, exit: opts.exit });
  if (!opts.exit) lifecycle.installProcessHandlers();
  return { config, logger, registry, lifecycle };
}

/**
 * Runs an app's start function. A failure during start (bad config, a dependency unreachable)
 * is printed and exits 1; a running app stops through its lifecycle.
 */
export function runMain(start: () => Promise<void>): void {
  start().catch((err) => {
    if (err instanceof ConfigError) console.error(err.message);
    else console.error('startup failed:', err);
    process.exit(1);
  });
}
