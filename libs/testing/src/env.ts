import { randomBytes } from 'node:crypto';

/**
 * Where the integration tests find the real services. `make test` starts a broker of its own
 * (port 19092) so that tests never share one with a running `make up` stack, and uses its own
 * database; the destructive helpers refuse any database whose name lacks "test".
 */
export interface TestEnv {
  kafkaBrokers: string[];
  /**
   * TEST_KAFKA_BROKERS=none: a run of the suites that need no broker, with none to reach. Their
   * clients point at a port nothing listens on, so a suite that starts to need one fails.
   */
  withoutBroker: boolean;
  databaseUrl: string;
  redisUrl: string;
  /** Unique per test run: every topic, group and Redis key of the run carries it. */
  runId: string;
}

let cached: TestEnv | undefined;

export function testEnv(): TestEnv {
  if (!cached) {
    const brokers = process.env.TEST_KAFKA_BROKERS ?? '127.0.0.1:19092';
    cached = {
      kafkaBrokers: brokers === 'none' ? ['127.0.0.1:1'] : brokers.split(','),
      withoutBroker: brokers === 'none',
      databaseUrl: process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/chainpipe_test',
      redisUrl: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379/0',
      runId: `t${Date.now().toString(36)}${randomBytes(2).toString('hex')}`,
    };
  }
  return cached;
}

/** A unique name for one test's topics or group: `<run>-<label>-<n>.` */
let counter = 0;
export function uniquePrefix(label: string): string {
  counter += 1;
  return `${testEnv().runId}-${label}-${counter}.`;
}

export function assertTestDatabase(url: string): void {
  const name = decodeURIComponent(new URL(url).pathname.slice(1));
  if (!/test/i.test(name)) throw new Error(`refusing to run destructive test helpers on database ${JSON.stringify(name)}`);
}
