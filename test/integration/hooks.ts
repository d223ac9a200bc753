import { endLeftoverProcesses, prepareTestDatabase, testEnv, testKafka } from '@chainpipe/testing';

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
    await prepareTestDatabase(env.databaseUrl);
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
