import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { MIGRATIONS_DIR, createDb, ensureDatabase, migrateLatest, type Knex } from '@chainpipe/db';
import { assertTestDatabase, endLeftoverProcesses, testEnv, testKafka } from '@chainpipe/testing';

/** Hash of every migration file: when it changes, the test schema is rebuilt from scratch. */
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
 * Root hooks of the integration suite: a migrated test database (its name must contain "test")
 * and a reachable broker. Tests never wipe shared tables; they isolate by unique ids, topics
 * and groups, so several runs may share the database. It is rebuilt only when the migrations
 * changed since it was built.
 */
export const mochaHooks = {
  async beforeAll(this: Mocha.Context) {
    this.timeout(60_000);
    const env = testEnv();
    assertTestDatabase(env.databaseUrl);
    await ensureDatabase(env.databaseUrl);
    const db = createDb({ url: env.databaseUrl, poolMax: 1 });
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
    if (env.withoutBroker) return;
    const admin = testKafka().admin();
    await admin.connect();
    await admin.describeCluster();
    await admin.disconnect();
  },
  /** An app a test left running would hold the runner open after its summary: ended here, and a failure. */
  async afterAll() {
    const left = await endLeftoverProcesses();
    if (left.length) throw new Error(`processes left running by the tests (killed now): ${left.join(', ')}`);
  },
};
