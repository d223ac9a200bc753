import { createDb, ensureDatabase, migrateLatest } from '@chainpipe/db';
import { assertTestDatabase, testEnv, testKafka } from '@chainpipe/testing';

/**
 * Root hooks of the integration suite: a clean, migrated test database (its name must contain
 * "test") and a reachable broker. Each test file isolates its topics and groups by prefix.
 */
export const mochaHooks = {
  async beforeAll(this: Mocha.Context) {
    this.timeout(60_000);
    const env = testEnv();
    assertTestDatabase(env.databaseUrl);
    await ensureDatabase(env.databaseUrl);
    const db = createDb({ url: env.databaseUrl, poolMax: 1 });
    try {
      const { rows } = await db.raw<{ rows: { nspname: string }[] }>(
        "select nspname from pg_namespace where nspname not like 'pg\\_%' and nspname not in ('information_schema', 'public')",
      );
      for (const { nspname } of rows) await db.raw('drop schema ?? cascade', [nspname]);
      await db.raw('drop table if exists public.knex_migrations, public.knex_migrations_lock cascade');
      await migrateLatest(db);
    } finally {
      await db.destroy();
    }
    const admin = testKafka().admin();
    await admin.connect();
    await admin.describeCluster();
    await admin.disconnect();
  },
};
