/**
 * Root hooks of the fault suite: a Postgres and a Kafka broker of the suite's own (free ports,
 * temp folders), migrated and with every registry topic, because the suite stops and restarts
 * them. The machine's Postgres and the shared test broker are never touched.
 */
import { TOPICS } from '@chainpipe/contracts';
import { createDb, ensureDatabase, migrateLatest } from '@chainpipe/db';
import { PrivateBroker, PrivatePostgres, createTopicsWithLeaders, endLeftoverProcesses } from '@chainpipe/testing';
import { Kafka, logLevel } from 'kafkajs';

export interface FaultEnv {
  broker: PrivateBroker;
  pg: PrivatePostgres;
  databaseUrl: string;
}

let env: FaultEnv | undefined;

export function faultEnv(): FaultEnv {
  if (!env) throw new Error('fault environment not started (test/fault/fault-env.ts root hooks)');
  return env;
}

/** Recovery times the cases measured, printed at the end of the suite (docs/operations.md, "Faults"). */
export const recoveries: { fault: string; what: string; ms: number }[] = [];

/** Every registry topic on `brokers`, with its leaders. */
export async function createTopicsOn(brokers: string[], replicationFactor = 1): Promise<void> {
  const admin = new Kafka({ clientId: 'fault-setup', brokers, logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    await createTopicsWithLeaders(admin, Object.values(TOPICS), { replicationFactor });
  } finally {
    await admin.disconnect();
  }
}

export const mochaHooks = {
  async beforeAll(this: Mocha.Context) {
    this.timeout(180_000);
    const [pg, broker] = await Promise.all([PrivatePostgres.start(), PrivateBroker.start()]);
    env = { pg, broker, databaseUrl: pg.url() };
    await ensureDatabase(env.databaseUrl);
    const db = createDb({ url: env.databaseUrl, poolMax: 1 });
    try {
      await migrateLatest(db);
    } finally {
      await db.destroy();
    }
    await createTopicsOn(broker.brokers);
  },
  async afterAll(this: Mocha.Context) {
    this.timeout(60_000);
    if (recoveries.length) {
      console.log('\n  recovery times measured by the fault suite:');
      for (const r of recoveries) console.log(`    ${r.fault.padEnd(32)} ${r.what.padEnd(48)} ${(r.ms / 1000).toFixed(2)} s`);
    }
    // An app a case left running would hold the runner open after its summary: ended, and a failure.
    const left = await endLeftoverProcesses();
    await Promise.all([env?.broker.destroy(), env?.pg.destroy()]);
    if (left.length) throw new Error(`processes left running by the tests (killed now): ${left.join(', ')}`);
  },
};
