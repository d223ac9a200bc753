import { createLogger, loadConfig } from '@chainpipe/runtime';
import { createDb, ensureDatabase, migrateLatest } from './db';
import { dbConfig } from './config';

/** `npm run migrate`: creates the database if needed and applies every pending migration. */
async function main(): Promise<void> {
  const config = loadConfig(dbConfig, process.env);
  const logger = createLogger({ name: 'migrate' });
  await ensureDatabase(config.DATABASE_URL);
  const db = createDb({ url: config.DATABASE_URL, poolMax: 1, applicationName: 'chainpipe-migrate' });
  try {
    const applied = await migrateLatest(db);
    logger.info({ msg: 'migrations_applied', applied });
  } finally {
    await db.destroy();
  }
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
