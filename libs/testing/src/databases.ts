import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { MIGRATIONS_DIR, createDb, ensureDatabase, migrateLatest, type Knex } from '@chainpipe/db';
import { assertTestDatabase, testEnv } from './env';

/** Hash of every migration file: when it changes, a test schema is rebuilt from scratch. */
function migrationsFingerprint(): string {
  const h = createHash('sha256');
  for (const f of readdirSync(MIGRATIONS_DIR).sort()) h.update(f).update(readFileSync(path.join(MIGRATIONS_DIR, f)));
  return h.digest('hex');
}

async function resetSchemas(db: Knex): Promise<void> {
  const { rows } = await db.raw<{ rows: { nspname: string }[] }>(
    "select nspname from pg_namespace where nspname not like 'pg\\_%' and nspname not in ('information_schema', 'public')",
  );
  for (const { nspname } of rows) await db.raw('drop schema ?? cascade', [nspname]);
  await db.raw('drop table if exists public.knex_migrations, public.knex_migrations_lock cascade');
}

/**
 * A migrated test database (its name must contain "test"), created when missing and rebuilt
 * only when the migrations changed since it was built: several runs and suites may share it.
 */
export async function prepareTestDatabase(url: string): Promise<void> {
  assertTestDatabase(url);
  await ensureDatabase(url);
  const db = createDb({ url, poolMax: 1 });
  try {
    const fingerprint = migrationsFingerprint();
    await db.raw('select pg_advisory_lock(4242)');
    await db.raw('create table if not exists public.test_schema_fingerprint (fingerprint text not null)');
    const row = await db('public.test_schema_fingerprint').first('fingerprint');
    if (row?.fingerprint !== fingerprint) {
      await resetSchemas(db);
      await db('public.test_schema_fingerprint').delete();
      await db('public.test_schema_fingerprint').insert({ fingerprint });
    }
    await migrateLatest(db);
    await db.raw('select pg_advisory_unlock(4242)');
  } finally {
    await db.destroy();
  }
}

/**
 * A database of one suite's own, beside the test database (its name plus `_<suffix>`), migrated.
 * For suites whose processes act on every row of a kind — the order executor forwards and
 * refunds every paid order it finds — so that suites running side by side never act on each
 * other's rows. Everything else shares the test database and isolates by unique ids.
 */
export async function suiteDatabase(suffix: string): Promise<string> {
  if (!/^[a-z0-9_]+$/.test(suffix)) throw new Error(`not a database name suffix: ${suffix}`);
  const url = new URL(testEnv().databaseUrl);
  url.pathname = `${url.pathname}_${suffix}`;
  await prepareTestDatabase(url.toString());
  return url.toString();
}
