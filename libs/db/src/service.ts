import type { ServiceHost } from '@chainpipe/runtime';
import type { DbConfig } from './config';
import { createDb, dbComponent, type Knex } from './db';

/**
 * Opens the app's Postgres pool (named after the app in `pg_stat_activity`) and registers it to
 * close after every entry point stopped. `statementTimeoutMs` bounds each statement server-side.
 */
export function addPostgres(svc: ServiceHost<DbConfig>, opts: { statementTimeoutMs?: number; poolMax?: number } = {}): Knex {
  const db = createDb({ url: svc.config.DATABASE_URL, poolMax: opts.poolMax ?? svc.config.DB_POOL_MAX, applicationName: svc.name, statementTimeoutMs: opts.statementTimeoutMs });
  svc.use(dbComponent(db));
  return db;
}
