import { readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import knex, { type Knex } from 'knex';
import pg from 'pg';
import { systemClock, type Clock, type HealthReport, type Timer } from '@chainpipe/runtime';

// int8 (bigint ids, counts) comes back as a string by default: keep it that way for ids (they
// pass JS's safe range one day), but parse numeric aggregates where the caller asks for them.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => v);

export type { Knex };

export const MIGRATIONS_DIR = path.resolve(__dirname, '../migrations');

/**
 * A knex pool. `statementTimeoutMs` bounds every statement server-side: an HTTP request that
 * already answered 504 must not leave its query running.
 */
export function createDb(opts: { url: string; poolMax?: number; applicationName?: string; statementTimeoutMs?: number }): Knex {
  return knex({
    client: 'pg',
    connection: {
      connectionString: opts.url,
      application_name: opts.applicationName ?? 'chainpipe',
      // Short indexed statements only: JIT compilation costs more than it saves (tens of ms on
      // a query whose cost estimate crosses the threshold).
      options: '-c jit=off',
      ...(opts.statementTimeoutMs ? { statement_timeout: opts.statementTimeoutMs } : {}),
    },
    pool: { min: 0, max: opts.poolMax ?? 10 },
    acquireConnectionTimeout: 10_000,
  });
}

/** `.ts` when this process runs the sources (tsx), `.js` when it runs the build in dist/. */
const CODE_EXT = path.extname(__filename);
const loadModule = createRequire(__filename);

/**
 * The migrations of MIGRATIONS_DIR in file-name order, each named by its source file
 * (`<stamp>_<what>.ts`), the name knex_migrations has recorded since the first deploy, whether the
 * process runs the sources or their compiled `.js` beside each other in dist/: a database migrated
 * by one is up to date for the other, and nothing is applied twice.
 */
export const migrationFiles: Knex.MigrationSource<string> = {
  async getMigrations() {
    return readdirSync(MIGRATIONS_DIR)
      .filter((f) => f.endsWith(CODE_EXT) && !f.endsWith('.d.ts'))
      .map((f) => f.slice(0, -CODE_EXT.length))
      .sort();
  },
  getMigrationName: (stem) => `${stem}.ts`,
  // require, not import(): a process that runs the sources through tsx/cjs (mocha) loads .ts
  // files by require only.
  getMigration: async (stem) => loadModule(path.join(MIGRATIONS_DIR, stem + CODE_EXT)) as Knex.Migration,
};

export async function migrateLatest(db: Knex): Promise<string[]> {
  const [, applied] = (await db.migrate.latest({ migrationSource: migrationFiles, tableName: 'knex_migrations', schemaName: 'public' })) as [number, string[]];
  return applied;
}

/**
 * A database component for the lifecycle: health by a cheap query, closes the pool on stop.
 * Postgres unreachable is `degraded` (not ready: traffic should avoid the app), never `error`:
 * a restart would not bring the server back, and the pool reconnects by itself. It checks
 * every 5 s while healthy and every second while not, so readiness returns soon after.
 */
export function dbComponent(db: Knex, opts: { checkMs?: number; recheckMs?: number; clock?: Pick<Clock, 'setTimeout'> } = {}) {
  const clock = opts.clock ?? systemClock;
  let last: HealthReport = { state: 'ok' };
  let timer: Timer | undefined;
  let stopped = false;
  const schedule = () => {
    if (stopped) return;
    timer = clock.setTimeout(check, last.state === 'ok' ? (opts.checkMs ?? 5_000) : (opts.recheckMs ?? 1_000)).unref();
  };
  const check = () => {
    db.raw('select 1')
      .then(() => (last = { state: 'ok' }))
      .catch((err: Error) => (last = { state: 'degraded', detail: `postgres unreachable: ${err.message}` }))
      .finally(schedule);
  };
  schedule();
  return {
    name: 'postgres',
    health: () => last,
    stop: async () => {
      stopped = true;
      timer?.cancel();
      await db.destroy();
    },
  };
}

/**
 * Creates the database named in `url` if it does not exist, connecting to the `postgres`
 * maintenance database of the same server. Safe to call from many processes at once (parallel
 * test workers on a fresh server, apps starting side by side): a creation that loses a race
 * counts as done once the database is there.
 */
export async function ensureDatabase(url: string): Promise<void> {
  const u = new URL(url);
  const name = decodeURIComponent(u.pathname.slice(1));
  if (!/^[a-zA-Z_][a-zA-Z0-9_]*$/.test(name)) throw new Error(`refusing database name ${JSON.stringify(name)}`);
  u.pathname = '/postgres';
  const client = new pg.Client({ connectionString: u.toString() });
  await client.connect();
  const exists = async () => ((await client.query('select 1 from pg_database where datname = $1', [name])).rowCount ?? 0) > 0;
  try {
    if (!(await exists())) await client.query(`create database "${name}"`);
  } catch (err) {
    // Another creator won the race: the loser sees duplicate_database (42P04) or, when both got
    // past the catalog's own check, unique_violation (23505) on pg_database's name index (raised
    // once the winner committed). Either way the database is there now.
    if (!(await exists().catch(() => false))) throw err;
  } finally {
    await client.end();
  }
}
