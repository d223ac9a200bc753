import { expect } from 'chai';
import { createDb, type Knex } from '@chainpipe/db';
import { QuoteStore } from '@chainpipe/price';
import { createRedis } from '@chainpipe/redis';
import {
  apiFuzzRequests,
  checkFuzzAnswer,
  createAppWithKey,
  createIntegratorWithKey,
  createRegistryTopics,
  freePort,
  responseCheck,
  sendFuzzRequest,
  spawnTs,
  stopProcess,
  testEnv,
  uniquePrefix,
  waitReady,
  type FuzzDocument,
  type FuzzRequest,
  type RunningProcess,
} from '@chainpipe/testing';

/**
 * The four public apps as real processes on free ports of their own (upstream-sim stands in for
 * the third-party upstreams), each walked through every operation of the /openapi.json it
 * serves: the documented example, each required parameter dropped, hostile values (NUL, RTL and
 * control characters, oversized strings, numbers past 2^31 and 2^53, `__proto__`, wrong types),
 * malformed and non-object bodies, no credentials. Every answer must be documented for its
 * operation (status and JSON body) and none may be 5xx but the spec's 500 for a missing
 * `x-chain-net`.
 */
const APPS = ['chain-ingest', 'tx-gateway', 'market-gateway', 'aggregator-gateway'] as const;
/** The same requests on every run; FUZZ_SEED=<n> draws another set (to explore, or to replay a failure). */
const SEED = Number(process.env.FUZZ_SEED ?? 20261126);
const VALUES_PER_SLOT = 2;
const CONCURRENCY = 8;

describe('public APIs under fuzz: every operation of each app’s OpenAPI document', function () {
  this.timeout(120_000);
  const env = testEnv();
  const procs: RunningProcess[] = [];
  const bases = new Map<string, string>();
  const credentials: Record<string, string> = {};
  let db: Knex;

  async function start(entry: string, extra: Record<string, string>): Promise<string> {
    const [port, ops] = await Promise.all([freePort(), freePort()]);
    const proc = spawnTs(entry, { ...extra, PORT: String(port), OPS_PORT: String(ops), LOG_LEVEL: 'error' });
    procs.push(proc);
    await waitReady(proc, ops, 90_000);
    return `http://127.0.0.1:${port}`;
  }

  before(async () => {
    db = createDb({ url: env.databaseUrl, poolMax: 2 });
    const prefix = uniquePrefix('fuzz');
    const redisPrefix = `${env.runId}:fuzz:`;
    credentials['content-secret-x'] = `fuzz-secret-${env.runId}`;
    credentials['x-api-key'] = (await createAppWithKey(db, { name: 'fuzz' })).key;
    credentials['x-integrator-api-key'] = (await createIntegratorWithKey(db, { name: `fuzz-${env.runId}`, feeRateBp: 30 })).key;
    await createRegistryTopics(prefix);
    // a fresh ETH price, so the documented order example is checked past its price look-up
    const redis = createRedis({ url: env.redisUrl, keyPrefix: redisPrefix });
    await new QuoteStore(redis).writeLatest([{ kind: 'crypto', source: 'test', external_id: '1027', symbol: 'ETH', name: 'Ethereum', as_of: Date.now(), fetched_at: Date.now(), usd: { price: 2000 } } as never]);
    await redis.quit();
    const sim = await start('apps/upstream-sim/src/main.ts', {});
    const common = { KAFKA_BROKERS: env.kafkaBrokers.join(','), KAFKA_TOPIC_PREFIX: prefix, DATABASE_URL: env.databaseUrl, REDIS_URL: env.redisUrl, REDIS_KEY_PREFIX: redisPrefix };
    const started = await Promise.all([
      start('apps/chain-ingest/src/main.ts', { ...common, STREAM_SECRET: credentials['content-secret-x'] }),
      start('apps/tx-gateway/src/main.ts', { ...common, CHAIN_RPC_DEFAULT_BASE: `${sim}/rpc`, WEBHOOK_SECRET_KEY: '0'.repeat(64), TX_GATEWAY_PUSH_GROUP_PREFIX: `${prefix}tx-gateway-push` }),
      start('apps/market-gateway/src/main.ts', {
        ...common,
        POOL_UPSTREAM_URL: `${sim}/geckoterminal/api/v2`,
        KLINE_MARKET_API_URL: `${sim}/coingecko/api/v3`,
        MARKET_API_KEY: 'test-cg-key',
        KLINE_HUB_GROUP_PREFIX: `${prefix}market-gateway-hub`,
      }),
      start('apps/aggregator-gateway/src/main.ts', { ...common, CHANGENOW_API_URL: `${sim}/changenow`, THORNODE_API_URL: `${sim}/thornode` }),
    ]);
    APPS.forEach((app, i) => bases.set(app, started[i]));
  });

  after(async () => {
    for (const p of procs.reverse()) expect(await stopProcess(p), 'clean exit').to.equal(0);
    await db?.destroy();
  });

  for (const app of APPS) {
    it(`${app}: every answer documented, none 5xx`, async () => {
      const base = bases.get(app)!;
      const document = (await (await fetch(`${base}/openapi.json`)).json()) as FuzzDocument & Parameters<typeof responseCheck>[0];
      const check = responseCheck(document);
      const requests = apiFuzzRequests(document, { credentials, seed: SEED, valuesPerSlot: VALUES_PER_SLOT });
      expect(requests.length, 'requests built from the document').to.be.greaterThan(Object.keys(document.paths).length);
      const problems: string[] = [];
      const queue: FuzzRequest[] = [...requests];
      const worker = async () => {
        for (let req = queue.shift(); req; req = queue.shift()) {
          const answer = await sendFuzzRequest(base, req).catch((err: Error) => ({ status: 0, contentType: null, body: undefined, text: `no answer: ${err.message}` }));
          const problem = answer.status === 0 ? `${req.method} ${req.path.slice(0, 160)} (${req.what}): ${answer.text}` : checkFuzzAnswer(check, req, answer);
          if (problem) problems.push(problem);
        }
      };
      await Promise.all(Array.from({ length: CONCURRENCY }, worker));
      expect(problems, `${problems.length} of ${requests.length} requests`).to.deep.equal([]);
    });
  }
});
