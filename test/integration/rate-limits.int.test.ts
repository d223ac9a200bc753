import { expect } from 'chai';
import { Registry } from 'prom-client';
import { loadContracts } from '@chainpipe/contracts';
import { ApiKeyRepository, createDb, type Knex } from '@chainpipe/db';
import { ApiRoutes, RateLimits, createHttpApp, createKeyResolver, finishHttpApp, listen, messageEnvelope, routeUpgrades, sendOk, type StartedServer } from '@chainpipe/http';
import { createMarketGatewayApp, klineModule } from '@chainpipe/market-gateway';
import { ConnectionCap, createRedis } from '@chainpipe/redis';
import { createLogger, systemClock } from '@chainpipe/runtime';
import {
  connectWs,
  createAppWithKey,
  createIntegratorWithKey,
  createRegistryTopics,
  freePort,
  parsePrometheusText,
  spawnTs,
  startTxGateway,
  stopProcess,
  testEnv,
  uniquePrefix,
  waitFor,
  waitReady,
  type RunningProcess,
  type TestWsClient,
  refusedUpgrade,
} from '@chainpipe/testing';

/**
 * Rate limits and the candlestick hub's connection cap on the running apps (Redis shared by the
 * copies): each app is started with low limits, and what a client sees past them is checked from
 * outside (status, Retry-After, the service's own envelope) with the refusals in the app's metrics.
 */

interface Started {
  proc: RunningProcess;
  base: string;
  ops: string;
}

/** What a refused WebSocket upgrade answered: status, `Retry-After`, body as JSON. */
async function refusedUpgradeJson(url: string, headers: Record<string, string>): Promise<{ status: number; retryAfter: string | undefined; body: unknown }> {
  const refused = await refusedUpgrade(url, headers);
  return { ...refused, body: JSON.parse(refused.body) };
}

/** Refusals counted by an app, by route and scope. */
async function refusals(ops: string): Promise<Record<string, number>> {
  const text = await (await fetch(`${ops}/metrics`)).text();
  const out: Record<string, number> = {};
  for (const s of parsePrometheusText(text).samples) {
    if (s.name === 'chainpipe_rate_limit_refusals_total') out[`${s.labels.route} ${s.labels.scope}`] = s.value;
  }
  return out;
}

/** Status, Retry-After and JSON body of an answer. */
async function answer(res: Response): Promise<{ status: number; retryAfter: string | null; body: unknown }> {
  const text = await res.text();
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body: text.startsWith('{') ? JSON.parse(text) : text };
}

/** A Retry-After within the window a limit was given (1 minute). */
function expectRetryWithinMinute(value: string | null | undefined): void {
  expect(value, 'Retry-After').to.match(/^\d+$/);
  expect(Number(value)).to.be.within(1, 60);
}

describe('rate limits on the running apps (Redis shared by every copy)', function () {
  this.timeout(120_000);
  const env = testEnv();
  let db: Knex;
  const procs: RunningProcess[] = [];
  let ingest: Started;
  let aggregator: Started;
  let marketA: Started;
  let marketB: Started;
  let txGateway: Started;
  const sockets: TestWsClient[] = [];

  async function start(entry: string, vars: Record<string, string>): Promise<Started> {
    const [port, ops] = await Promise.all([freePort(), freePort()]);
    const proc = spawnTs(entry, { PORT: String(port), OPS_PORT: String(ops), LOG_LEVEL: 'warn', ...vars });
    procs.push(proc);
    await waitReady(proc, ops, 90_000);
    return { proc, base: `http://127.0.0.1:${port}`, ops: `http://127.0.0.1:${ops}` };
  }

  before(async () => {
    db = createDb({ url: env.databaseUrl, poolMax: 2 });
    const prefix = uniquePrefix('ratelimits');
    await createRegistryTopics(prefix);
    // One key space for every app and copy: the copies of market-gateway share their counts.
    const common = { KAFKA_BROKERS: env.kafkaBrokers.join(','), KAFKA_TOPIC_PREFIX: prefix, DATABASE_URL: env.databaseUrl, REDIS_URL: env.redisUrl, REDIS_KEY_PREFIX: `${prefix}redis:` };
    const market = {
      ...common,
      MARKET_API_KEY: 'test-cg-key',
      KLINE_HUB_GROUP_PREFIX: `${prefix}market-gateway-hub`,
      RATE_LIMIT_KLINE_ENSURE_PER_CLIENT: '2/1m',
      KLINE_WS_MAX_CONNECTIONS_PER_KEY: '2',
    };
    const tx = startTxGateway(prefix, { RATE_LIMIT_RPC_PROXY_PER_KEY: '2/1m', RATE_LIMIT_RPC_PROXY_PER_CLIENT: '4/1m' }).then((t) => {
      procs.push(t.proc);
      return { proc: t.proc, base: new URL(t.wsUrl).origin.replace('ws:', 'http:'), ops: t.opsUrl };
    });
    [ingest, aggregator, marketA, marketB, txGateway] = await Promise.all([
      start('apps/chain-ingest/src/main.ts', { ...common, STREAM_SECRET: 'rate-limit-secret', RATE_LIMIT_TRUSTED_PROXIES: '127.0.0.1', RATE_LIMIT_STREAM_PER_CLIENT: '3/1m', RATE_LIMIT_WEBHOOK_PER_CLIENT: '2/1m' }),
      start('apps/aggregator-gateway/src/main.ts', { ...common, RATE_LIMIT_QUOTE_STREAM_PER_CLIENT: '2/1m', RATE_LIMIT_ORDER_CREATE_PER_CLIENT: '5/1m', RATE_LIMIT_ORDER_CREATE_PER_KEY: '2/1m' }),
      start('apps/market-gateway/src/main.ts', market),
      start('apps/market-gateway/src/main.ts', market),
      tx,
    ]);
  });

  after(async () => {
    for (const s of sockets) s.close();
    for (const p of procs.reverse()) expect(await stopProcess(p), 'clean exit').to.equal(0);
    await db?.destroy();
  });

  it('chain-ingest: /stream per client before the secret is checked, /webhook per client; 429 in the {code, message, data} envelope', async () => {
    const post = async (path: string, headers: Record<string, string>) => answer(await fetch(ingest.base + path, { method: 'POST', headers: { 'content-type': 'application/octet-stream', ...headers }, body: '{}' }));
    const wrongSecret = { 'content-secret-x': 'not-the-secret', 'cl-stream-network': 'ethereum-mainnet' };
    // three allowed (refused for the secret), the alias shares the count, the fourth is the limit's
    for (const path of ['/stream', '/tx/api/v1/stream', '/stream']) expect((await post(path, wrongSecret)).status, path).to.equal(401);
    const limited = await post('/tx/api/v1/stream', wrongSecret);
    expect([limited.status, limited.body]).to.deep.equal([429, { code: 429, message: 'too many requests', data: null }]);
    expectRetryWithinMinute(limited.retryAfter);
    // /webhook has its own count: two answered (no network header: 400), then 429
    for (let i = 0; i < 2; i += 1) expect((await post('/webhook', {})).status).to.equal(400);
    const webhook = await post('/webhook', {});
    expect([webhook.status, webhook.body]).to.deep.equal([429, { code: 429, message: 'too many requests', data: null }]);
    expectRetryWithinMinute(webhook.retryAfter);
    // through a trusted proxy (this test's address, RATE_LIMIT_TRUSTED_PROXIES) each client it names has its own count
    expect((await post('/webhook', { 'x-forwarded-for': '198.51.100.7' })).status).to.equal(400);
    expect((await post('/webhook', { 'x-forwarded-for': 'forged, 198.51.100.8' })).status).to.equal(400);
    expect(await refusals(ingest.ops)).to.deep.equal({ '/tx/api/v1/stream client': 1, '/webhook client': 1 });
  });

  it('aggregator-gateway: quote streams per client; order creation per integrator key and per client; 429 in the {code, msg, data} envelope', async () => {
    const tooMany = { code: 429, msg: 'too many requests', data: null };
    // quote streams: GET and POST share the client's count (requests the stream refuses still count)
    expect((await answer(await fetch(`${aggregator.base}/api/v2/quote/stream`))).status).to.equal(400);
    expect((await answer(await fetch(`${aggregator.base}/api/v2/quote/stream`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }))).status).to.equal(400);
    const stream = await answer(await fetch(`${aggregator.base}/api/v2/quote/stream?src_token_id=101&dst_token_id=1001&amount_in=1&slippage=0.01`));
    expect([stream.status, stream.body]).to.deep.equal([429, tooMany]);
    expectRetryWithinMinute(stream.retryAfter);

    const a = await createIntegratorWithKey(db, { name: `rl-a-${env.runId}`, feeRateBp: 30 });
    const b = await createIntegratorWithKey(db, { name: `rl-b-${env.runId}`, feeRateBp: 30 });
    const create = async (key?: string) =>
      answer(await fetch(`${aggregator.base}/api/v1/integrator/orders`, { method: 'POST', headers: { 'content-type': 'application/json', ...(key ? { 'x-integrator-api-key': key } : {}) }, body: '{}' }));
    // key A: two orders (an empty body is the spec's 400), the third past A's limit
    for (let i = 0; i < 2; i += 1) expect((await create(a.key)).status).to.equal(400);
    const perKey = await create(a.key);
    expect([perKey.status, perKey.body]).to.deep.equal([429, tooMany]);
    expectRetryWithinMinute(perKey.retryAfter);
    // key B has a count of its own; the address has now made 4 of its 5
    expect((await create(b.key)).status).to.equal(400);
    expect((await create()).status).to.equal(400);
    const perClient = await create();
    expect([perClient.status, perClient.body]).to.deep.equal([429, tooMany]);
    expectRetryWithinMinute(perClient.retryAfter);
    expect(await refusals(aggregator.ops)).to.deep.equal({ '/api/v2/quote/stream client': 1, '/api/v1/integrator/orders key': 1, '/api/v1/integrator/orders client': 1 });
  });

  it('tx-gateway: the RPC proxy per key after the key check and per client before it; 429 in the {code, msg, data} envelope', async () => {
    const a = await createAppWithKey(db, { name: `rl-rpc-a-${env.runId}` });
    const b = await createAppWithKey(db, { name: `rl-rpc-b-${env.runId}` });
    // without x-chain-net a call is the spec's 500 and reaches no node: enough to be counted
    const call = async (key: string, path = '/api/v1/rpcproxy') =>
      answer(await fetch(txGateway.base + path, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key }, body: JSON.stringify({ method: 'eth_blockNumber', params: [] }) }));
    const tooMany = { code: 429, msg: 'too many requests', data: null };
    expect((await call(a.key)).status).to.equal(500);
    expect((await call(a.key, '/tx/api/v1/rpcproxy')).status, 'both paths share the count').to.equal(500);
    const perKey = await call(a.key);
    expect([perKey.status, perKey.body]).to.deep.equal([429, tooMany]);
    expectRetryWithinMinute(perKey.retryAfter);
    // key B has its own count, the address has made 3 of its 4
    expect((await call(b.key)).status).to.equal(500);
    const perClient = await call(b.key);
    expect([perClient.status, perClient.body]).to.deep.equal([429, tooMany]);
    expectRetryWithinMinute(perClient.retryAfter);
    expect(await refusals(txGateway.ops)).to.deep.equal({ '/api/v1/rpcproxy key': 1, '/api/v1/rpcproxy client': 1 });
  });

  it('market-gateway: the debug ensure route per client across copies; 429 with the spec\'s 99001 body', async () => {
    const ensure = async (copy: Started) => answer(await fetch(`${copy.base}/api/v1/admin/debug/ingester/ensure`, { method: 'POST' }));
    expect(await ensure(marketA)).to.deep.include({ status: 200, body: 'ok' });
    expect(await ensure(marketB)).to.deep.include({ status: 200, body: 'ok' });
    const limited = await ensure(marketA);
    expect([limited.status, limited.body]).to.deep.equal([429, { code: 99001, message: 'Internal server error', error: { type: 'InternalServerError' } }]);
    expectRetryWithinMinute(limited.retryAfter);
    expect((await ensure(marketB)).status, 'the other copy counts the same client').to.equal(429);
    expect((await refusals(marketA.ops))['/api/v1/admin/debug/ingester/ensure client']).to.equal(1);
  });

  it('market-gateway: a key\'s WebSocket connections capped across both copies, a slot back once one closes', async () => {
    const { key } = await createAppWithKey(db, { name: `rl-ws-${env.runId}` });
    const other = await createAppWithKey(db, { name: `rl-ws-other-${env.runId}` });
    const ws = (copy: Started, path: string) => copy.base.replace('http', 'ws') + path;
    const hub = '/kline/api/v1/kline/ws';
    // one hub connection on each copy: the key's two slots
    const first = await connectWs(ws(marketA, hub), { 'x-api-key': key });
    sockets.push(first);
    sockets.push(await connectWs(ws(marketB, hub), { 'x-api-key': key }));
    // a third, of either kind, on either copy, is refused
    for (const [copy, path] of [
      [marketA, hub],
      [marketB, '/kline/api/v1/ws/candles'],
    ] as const) {
      const refused = await refusedUpgradeJson(ws(copy, path), { 'x-api-key': key });
      expect([refused.status, refused.body], path).to.deep.equal([429, { code: 99001, message: 'Internal server error', error: { type: 'InternalServerError' } }]);
      expect(refused.retryAfter).to.equal('5');
    }
    // another key is not affected
    sockets.push(await connectWs(ws(marketA, hub), { 'x-api-key': other.key }));
    // the first connection closes: its slot comes back
    first.close();
    // (the slot is given back as the server sees the close: an attempt before that is refused too)
    let refusedMeanwhile = 0;
    await waitFor(async () => {
      try {
        sockets.push(await connectWs(ws(marketA, hub), { 'x-api-key': key }));
        return true;
      } catch {
        refusedMeanwhile += 1;
        return false;
      }
    }, { timeoutMs: 10_000, intervalMs: 50, what: 'a slot freed by a closed connection' });
    expect(await refusals(marketA.ops)).to.include({ '/kline/api/v1/kline/ws key': 1 + refusedMeanwhile });
    expect(await refusals(marketB.ops)).to.include({ '/kline/api/v1/ws/{topic} key': 1 });
  });
});

describe('rate limits while Redis does not answer (the express app from the factory)', () => {
  it('each copy keeps counting in its own memory, refuses past the limit and counts those decisions', async () => {
    // A client of a port nobody listens on: never ready, as while Redis is down.
    const redis = createRedis({ url: `redis://127.0.0.1:${await freePort()}/0`, extra: { retryStrategy: () => 100 } });
    redis.on('error', () => undefined);
    const logger = createLogger({ name: 'rate-limit-test', level: 'silent' });
    const servers: StartedServer[] = [];
    const copy = async () => {
      const registry = new Registry();
      const limits = new RateLimits({ redis, registry, logger });
      const app = createHttpApp({ logger, registry, defaultEnvelope: messageEnvelope });
      const api = new ApiRoutes({ contracts: loadContracts(), rateLimits: { ping: limits.limit('ping', { perClient: '2/1m' }) } });
      api.route({ method: 'get', path: '/ping', summary: 'ping', auth: 'none', rateLimit: 'ping', ok: { data: { const: 'pong' }, description: 'pong' } }, (_req, res) => sendOk(res, 'pong'));
      app.use(api.router);
      finishHttpApp(app, logger);
      const server = await listen(app, 0, '127.0.0.1');
      servers.push(server);
      return { base: `http://127.0.0.1:${server.address.port}`, registry };
    };
    try {
      const [a, b] = [await copy(), await copy()];
      const ping = async (c: { base: string }) => answer(await fetch(`${c.base}/ping`));
      expect((await ping(a)).status).to.equal(200);
      expect((await ping(a)).status).to.equal(200);
      const limited = await ping(a);
      expect([limited.status, limited.body]).to.deep.equal([429, { code: 429, message: 'too many requests', data: null }]);
      expectRetryWithinMinute(limited.retryAfter);
      // the other copy counts on its own: the limit holds once per copy while Redis is away
      expect((await ping(b)).status).to.equal(200);
      const samples = parsePrometheusText(await a.registry.metrics()).samples;
      const value = (name: string, labels: Record<string, string>) => samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;
      expect(value('chainpipe_rate_limit_store_fallbacks_total', { limit: 'ping', scope: 'client' })).to.equal(3);
      expect(value('chainpipe_rate_limit_refusals_total', { route: '/ping', scope: 'client' })).to.equal(1);
    } finally {
      for (const s of servers) await s.close();
      redis.disconnect();
    }
  });
});

describe('the candlestick connection cap while Redis does not answer (the market gateway app from its factory)', () => {
  it('lets connections in without a slot and counts each as a fallback', async () => {
    const env = testEnv();
    const db = createDb({ url: env.databaseUrl, poolMax: 2 });
    const redis = createRedis({ url: env.redisUrl, keyPrefix: `${uniquePrefix('capdown')}redis:` });
    // The cap's Redis: a port nobody listens on, as while Redis is down.
    const down = createRedis({ url: `redis://127.0.0.1:${await freePort()}/0`, extra: { retryStrategy: () => 100, maxRetriesPerRequest: 0 } });
    down.on('error', () => undefined);
    const logger = createLogger({ name: 'kline-cap-test', level: 'silent' });
    const registry = new Registry();
    const keys = new ApiKeyRepository(db);
    const kline = klineModule({
      db,
      redis,
      contracts: loadContracts(),
      publishPoolNotice: async () => undefined,
      logger,
      registry,
      resolveKey: createKeyResolver((keyId) => keys.findKey(keyId)),
      market: { baseUrl: 'http://127.0.0.1:1', apiKey: '', timeoutMs: 1_000 },
      bodyLimitBytes: 1024 * 1024,
      clock: systemClock,
      ws: { pingMs: 60_000, maxBufferedBytes: 1024 * 1024 },
      connectionCap: { cap: new ConnectionCap(down, { maxPerKey: 1, leaseMs: 30_000, keyPrefix: 'kline:ws:conns:' }, systemClock), maxPerKey: 1, limits: new RateLimits({ redis: down, registry, logger }) },
    });
    const server = await listen(createMarketGatewayApp({ logger, registry, timeoutMs: 15_000, modules: [kline] }), 0, '127.0.0.1');
    routeUpgrades(server.server, [kline.upgrade]);
    kline.websockets.start();
    const clients: TestWsClient[] = [];
    try {
      const { key } = await createAppWithKey(db, { name: `rl-capdown-${env.runId}` });
      const url = `ws://127.0.0.1:${server.address.port}/kline/api/v1/kline/ws`;
      // a cap of one that cannot count: both let in
      clients.push(await connectWs(url, { 'x-api-key': key }));
      clients.push(await connectWs(url, { 'x-api-key': key }));
      const samples = parsePrometheusText(await registry.metrics()).samples;
      const fallbacks = samples.find((s) => s.name === 'chainpipe_rate_limit_store_fallbacks_total' && s.labels.limit === 'kline_ws_connections')?.value;
      expect(fallbacks).to.equal(2);
      expect(samples.some((s) => s.name === 'chainpipe_rate_limit_refusals_total' && s.value > 0), 'nothing refused').to.equal(false);
    } finally {
      for (const c of clients) c.close();
      await kline.websockets.closeAll();
      await server.close();
      await redis.quit();
      down.disconnect();
      await db.destroy();
    }
  });
});
