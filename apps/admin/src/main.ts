import { ApiKeyRepository, createDb, dbConfig } from '@chainpipe/db';
import { loadConfig } from '@chainpipe/runtime';
import { USAGE, UsageError, runCommand } from './commands';

async function main(): Promise<number> {
  const config = loadConfig(dbConfig, process.env);
  const db = createDb({ url: config.DATABASE_URL, poolMax: 1, applicationName: 'chainpipe-admin' });
  try {
    return await runCommand(process.argv.slice(2), new ApiKeyRepository(db), { out: (l) => console.log(l) });
  } finally {
    await db.destroy();
  }
}

main().then(
  (code) => process.exit(code),
  (err) => {
    if (err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      console.error(`${(err as Error).message}\n\n${USAGE}`);
      process.exit(2);
    }
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  },
);
