import type { AppName } from './ports';

/**
 * Node's own options an app runs with, wherever it runs: `make up` (scripts/dev/apps.ts prints
 * them beside the ports), its Kubernetes Deployment (a test holds the command to this table),
 * the test kit's processes (`spawnTs`), and a bench that runs the app's code in its own process
 * (bench/main.ts starts itself again with them). Only options measured to matter.
 */
export const APP_NODE_OPTIONS: Partial<Record<AppName, readonly string[]>> = {
  // A call at 10,000 pools allocates tens of megabytes that live across its Postgres, Redis and
  // Kafka waits; with V8's default semi-spaces (16 MB) each scavenge copies them, and most end up
  // promoted to the old space. With 64 MB the handler's CPU a tick was ~20 % lower
  // (docs/benchmarks-history.md, sixteenth round); the young generation may then grow to 192 MB (three
  // semi-spaces' worth in V8) against 48.
  'kline-aggregator': ['--max-semi-space-size=64'],
};

/** The node options of an app of the table; none for names outside it (test apps, tools). */
export function appNodeOptions(name: string): readonly string[] {
  return Object.prototype.hasOwnProperty.call(APP_NODE_OPTIONS, name) ? APP_NODE_OPTIONS[name as AppName]! : [];
}
