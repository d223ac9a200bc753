import { expect } from 'chai';
import { createDb, type Knex } from '@chainpipe/db';
import { QuoteStore } from '@chainpipe/price-store';
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
    // An operator's key reaches every route, the pools admin too (D171).
    credentials['x-api-key'] = (await createAppWithKey(db, { name: 'fuzz', role: 'operator' })).key;
    credentials['x-integrator-api-key'] = (await createIntegratorWithKey(db, { name: `fuzz-${env.runId}`, feeRateBp: 30 })).key;
    await createRegistryTopics(prefix);
    // What the price pipeline keeps in Redis: a fresh ETH price (the order example gets past its
    // price look-up) and the fiat rates (quotes in EUR)
    const redis = createRedis({ url: env.redisUrl, keyPrefix: redisPrefix });
    const now = Date.now();
    await new QuoteStore(redis).writeLatest([
      { kind: 'crypto', source: 'test', external_id: '1027', symbol: 'ETH', name: 'Ethereum', as_of: now, fetched_at: now, usd: { price: 2000 } } as never,
      { kind: 'fiat', source: 'test', base: 'USD', as_of: now, fetched_at: now, rates: { EUR: 0.92, JPY: 150 } } as never,
    ]);
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

  /** One request to a started app, with the fuzz suite's credentials; the JSON body. */
  async function call(app: string, method: string, path: string, body?: string): Promise<{ status: number; body: any }> {
    const headers: Record<string, string> = { 'x-api-key': credentials['x-api-key'], 'x-integrator-api-key': credentials['x-integrator-api-key'] };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(bases.get(app)! + path, { method, headers, body });
    return { status: res.status, body: await res.json() };
  }

  it('values no row can hold: the spec\'s "not found" where a value looks a row up, its 400 naming the parameter elsewhere', async () => {
    const market = (method: string, path: string, body?: string) => call('market-gateway', method, path, body);
    const orders = (method: string, path: string, body?: string) => call('aggregator-gateway', method, path, body);
    // price service (market-data.md): an unknown chain is 200 with 20002; exact and platform searches find nothing
    expect(await market('GET', '/price/api/v1/chains/eth%00')).to.deep.equal({ status: 200, body: { code: 20002, msg: 'chain not found', data: '' } });
    expect(await market('GET', '/price/api/v1/tokens?chain_id=1&address=0x%00')).to.deep.equal({ status: 200, body: { code: 0, msg: 'success', data: { total: 0, page: 1, limit: 0, items: [] } } });
    expect(await market('GET', '/price/api/v1/tokens/platforms/USDC%00')).to.deep.equal({ status: 200, body: { code: 0, msg: 'success', data: { total: 0, items: [] } } });
    expect(await market('GET', '/price/api/v1/fiats/rates/USD%00')).to.deep.equal({ status: 200, body: { code: 0, msg: 'success', data: { total: 0, items: [] } } });
    // candlestick pools: a pool id past int4 is a missing pool (404, 60001); a bad body is 400, 10001, by field
    for (const [method, path] of [['GET', '/api/v1/admin/pools/2147483648'], ['PATCH', '/api/v1/admin/pools/2147483648/activate'], ['PATCH', '/api/v1/admin/pools/999999999999999/deactivate']]) {
      expect(await market(method, path), `${method} ${path}`).to.deep.equal({ status: 404, body: { code: 60001, message: 'Pool not found', error: { type: 'NotFoundError' } } });
    }
    const pool = '{"chain_type":"ethereum","chain_id":1,"network_id":"eth","pool_address":"0x88e6a0c2ddd26feeb64f039a2c41296fcb3f5640"';
    const nul = await market('POST', '/api/v1/admin/pools', `${pool},"label":"a\\u0000b"}`);
    expect([nul.status, nul.body.code, nul.body.error.details.fieldErrors]).to.deep.equal([400, 10001, { label: ['must not contain NUL characters'] }]);
    const big = await market('POST', '/api/v1/admin/pools', pool.replace('"chain_id":1', '"chain_id":12345678901234567890') + '}');
    expect([big.status, big.body.code, big.body.error.details.fieldErrors]).to.deep.equal([400, 10001, { chain_id: ['must be <= 9007199254740991'] }]);
    // integrator orders (aggregator-integrator.md): an order number no order has is `order not found`
    expect(await orders('GET', '/api/v1/integrator/orders/CP%00')).to.deep.equal({ status: 400, body: { code: 400, msg: 'order not found', data: null } });
    const refund = await orders('POST', '/api/v1/integrator/orders/CP%00/request_refund', JSON.stringify({ refund_address: '0x5f2b7a4f0c0b4a3c9c0b9a8e7d6c5b4a39281706' }));
    expect(refund).to.deep.equal({ status: 400, body: { code: 400, msg: 'order not found', data: null } });
    const order = {
      src_token_id: 101, dst_token_id: 1001, amount_in: '1', dst_address: 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4', chosen_channel_id: 1, slippage: 0.01,
      main_channel_estimated_out_amount: '100', min_acceptable_out_amount: '99', channels: [{ channel_id: 1, estimated_out_str: '100' }], client_order_id: 'x\u0000',
    };
    expect(await orders('POST', '/api/v1/integrator/orders', JSON.stringify(order))).to.deep.equal({ status: 400, body: { code: 400, msg: 'client_order_id must not contain NUL characters', data: null } });
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
