import { Registry, collectDefaultMetrics } from 'prom-client';

/**
 * One registry per app (never prom-client's global one), so two apps in one test process and
 * repeated test runs never collide. Modules declare their own metrics on the registry they are
 * given.
 */
export function createMetricsRegistry(app: string, opts: { defaultMetrics?: boolean } = {}): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ app });
  if (opts.defaultMetrics !== false) collectDefaultMetrics({ register: registry, prefix: 'chainpipe_' });
  return registry;
}

export type { Registry };
