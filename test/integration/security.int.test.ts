import { createHmac, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { TOPICS } from '@chainpipe/contracts';
import { createDb, type Knex } from '@chainpipe/db';
import {
  PrivateRedis,
  createAppWithKey,
  createRegistryTopics,
  freePort,
  readFixtureBytes,
  readTopic,
  spawnTs,
  startTxGateway,
  stopProcess,
  testEnv,
  uniquePrefix,
  waitFor,
  waitReady,
  type RunningProcess,
} from '@chainpipe/testing';

/**
 * The trust boundaries of issue 52, each shown from outside on the running apps: what a
 * customer's key, an anonymous caller and a mistake in configuration can reach. The chain node
 * is a stand-in speaking JSON-RPC (a third-party upstream); the apps, Kafka, Postgres and Redis are
 * real (Redis a private one with a password, so that its URL carries a credential).
 */

/** A node provider's key as QuickNode puts it in an endpoint's path, and one as a query parameter. */
const PROVIDER_KEY = '4f2a9c1e7b3d8a6f0e5c2b9d1a7f3e8c6b4d2a0f';
const QUERY_KEY = '25f66928-0b70-48cd-9ac6-da6f8247c663';
const REDIS_PASSWORD = `s3cr3t-${randomBytes(6).toString('hex')}`;
const QN_TOKEN = `qnsec_${randomBytes(12).toString('base64url')}`;
const STREAM_SECRET = 'security-suite-stream-secret';

interface Started {
  proc: RunningProcess;
  base: string;
  ops: string;
}

/** A chain node stand-in at /<key>/<network>: answers eth_blockNumber, records every call. */
function startNode() {
  const calls: { path: string; method: string }[] = [];
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      const body = JSON.parse(raw) as { id: unknown; method: string };
      calls.push({ path: req.url ?? '', method: body.method });
      res.setHeader('content-type', 'application/json');
      if (body.method === 'eth_blockNumber') return res.end(JSON.stringify({ jsonrpc: '2.0', id: body.id, result: '0x1312d00' }));
      res.end(JSON.stringify({ jsonrpc: '2.0', id: body.id, error: { code: -32601, message: `the method ${body.method} does not exist/is not available` } }));
    });
  });
  return { server, calls };
}

async function json(res: Response): Promise<{ status: number; body: any }> {
  const text = await res.text();
  return { status: res.status, body: text.startsWith('{') ? JSON.parse(text) : text };
}

describe('security boundaries on the running apps (issue 52)', function () {
  this.timeout(120_000);
  const env = testEnv();
  let db: Knex;
  let prefix: string;
  let redis: PrivateRedis;
  let node: ReturnType<typeof startNode>;
  let closedPort: number;
  let tx: Started;
  let market: Started;
  let ingest: Started;
  const procs: RunningProcess[] = [];
  const keys = { customer: '', operator: '' };

  async function start(entry: string, vars: Record<string, string>): Promise<Started> {
    const [port, ops] = await Promise.all([freePort(), freePort()]);
    const proc = spawnTs(entry, { PORT: String(port), OPS_PORT: String(ops), ...vars });
    procs.push(proc);
    await waitReady(proc, ops, 90_000);
    return { proc, base: `http://127.0.0.1:${port}`, ops: `http://127.0.0.1:${ops}` };
  }

  const call = (app: Started, method: string, path: string, opts: { key?: string; body?: unknown; headers?: Record<string, string> } = {}) =>
    fetch(app.base + path, {
      method,
      headers: { ...(opts.key ? { 'x-api-key': opts.key } : {}), ...(opts.body === undefined ? {} : { 'content-type': 'application/json' }), ...opts.headers },
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
    }).then(json);

  before(async () => {
    db = createDb({ url: env.databaseUrl, poolMax: 2 });
    prefix = uniquePrefix('security');
    await createRegistryTopics(prefix);
    redis = await PrivateRedis.start({ password: REDIS_PASSWORD });
    node = startNode();
    await new Promise<void>((resolve) => node.server.listen(0, '127.0.0.1', () => resolve()));
    const nodePort = (node.server.address() as AddressInfo).port;
    closedPort = await freePort();
    keys.customer = (await createAppWithKey(db, { id: `${env.runId}-sec-customer`, name: 'security customer', role: 'customer' })).key;
    keys.operator = (await createAppWithKey(db, { id: `${env.runId}-sec-operator`, name: 'security operator', role: 'operator' })).key;
    const common = { KAFKA_BROKERS: env.kafkaBrokers.join(','), KAFKA_TOPIC_PREFIX: prefix, DATABASE_URL: env.databaseUrl, REDIS_KEY_PREFIX: `${prefix}redis:` };

    const gateway = startTxGateway(prefix, {
      LOG_LEVEL: 'info',
      REDIS_URL: redis.url,
      // The provider's nodes, keys in path and query; ethereum-mainnet's does not answer.
      CHAIN_RPC_DEFAULT_BASE: `http://127.0.0.1:${nodePort}/${PROVIDER_KEY}`,
      CHAIN_RPC_URLS: `ethereum-mainnet=http://127.0.0.1:${closedPort}/${PROVIDER_KEY}/?apikey=${QUERY_KEY}`,
      CHAIN_RPC_TIMEOUT_MS: '2000',
    }).then((t) => {
      procs.push(t.proc);
      return { proc: t.proc, base: new URL(t.wsUrl).origin.replace('ws:', 'http:'), ops: t.opsUrl };
    });
    [tx, market, ingest] = await Promise.all([
      gateway,
      // The debug routes on the ops listener only, as a deployment may keep them.
      start('apps/market-gateway/src/main.ts', { ...common, LOG_LEVEL: 'warn', REDIS_URL: env.redisUrl, MARKET_API_KEY: 'security-cg-key', KLINE_HUB_GROUP_PREFIX: `${prefix}hub`, KLINE_DEBUG_ON_OPS: 'true' }),
      start('apps/chain-ingest/src/main.ts', { ...common, LOG_LEVEL: 'warn', REDIS_URL: env.redisUrl, STREAM_SECRET, WEBHOOK_QUICKNODE_SECURITY_TOKEN: QN_TOKEN }),
    ]);
  });

  after(async () => {
    for (const p of procs.reverse()) expect(await stopProcess(p), 'clean exit').to.equal(0);
    if (node) {
      node.server.closeAllConnections();
      await new Promise((resolve) => node.server.close(resolve));
    }
    await redis?.destroy();
    await db?.destroy();
  });

  describe('the RPC proxy forwards read-only calls only', () => {
    it('refuses node administration, Bitcoin Core\'s control calls and broadcasts with 400 in its envelope; no node is asked', async () => {
      const asked = node.calls.length;
      for (const [network, method] of [
        ['bsc-mainnet', 'admin_nodeInfo'],
        ['bsc-mainnet', 'debug_traceTransaction'],
        ['bsc-mainnet', 'personal_listAccounts'],
        ['bsc-mainnet', 'eth_sendRawTransaction'],
        ['bitcoin-mainnet', 'stop'],
        ['bitcoin-mainnet', 'setban'],
        ['bitcoin-mainnet', 'scantxoutset'],
        ['solana-mainnet', 'requestAirdrop'],
      ]) {
        const r = await call(tx, 'POST', '/api/v1/rpcproxy', { key: keys.operator, body: { method, params: [] }, headers: { 'x-chain-net': network } });
        expect(r, `${network} ${method}`).to.deep.equal({ status: 400, body: { code: 400, msg: `method ${method} is not allowed on ${network}: the proxy forwards read-only calls only`, data: null } });
      }
      expect(node.calls.length, 'calls that reached the node').to.equal(asked);
      // A read still goes through.
      const read = await call(tx, 'POST', '/tx/api/v1/rpcproxy', { key: keys.customer, body: { method: 'eth_blockNumber' }, headers: { 'x-chain-net': 'bsc-mainnet' } });
      expect(read).to.deep.equal({ status: 200, body: { code: 1, msg: 'success', data: '0x1312d00' } });
      expect(node.calls.at(-1)).to.deep.equal({ path: `/${PROVIDER_KEY}/bsc-mainnet`, method: 'eth_blockNumber' });
    });
  });

  describe('shared pools change only with an operator\'s key', () => {
    it('DEX pools: a customer\'s key is 403 on register and delete, an operator\'s works; trades read with any key', async () => {
      const pool = `0x${randomBytes(20).toString('hex')}`;
      const register = { chainType: 'ethereum', chainId: 1, poolAddress: pool };
      const refused = { status: 403, body: { code: 403, message: 'operator key required', data: null } };
      expect(await call(tx, 'POST', '/tx/api/v1/dex-pools', { key: keys.customer, body: register })).to.deep.equal(refused);
      expect(await db('tx.dex_pools').where({ pool_address: pool })).to.have.length(0);
      expect(await call(tx, 'POST', '/tx/api/v1/dex-pools', { key: keys.operator, body: register })).to.deep.equal({ status: 200, body: { code: 0, message: 'success', data: 'success' } });
      expect(await call(tx, 'GET', `/tx/api/v1/dex-pools/${pool}/trades?chainType=ethereum&chainId=1`, { key: keys.customer })).to.deep.equal({ status: 200, body: { code: 0, message: 'success', data: { items: [] } } });
      expect(await call(tx, 'DELETE', `/tx/api/v1/dex-pools/${pool}?chainType=ethereum&chainId=1`, { key: keys.customer })).to.deep.equal(refused);
      expect(await db('tx.dex_pools').where({ pool_address: pool })).to.have.length(1);
      expect((await call(tx, 'DELETE', `/tx/api/v1/dex-pools/${pool}?chainType=ethereum&chainId=1`, { key: keys.operator })).status).to.equal(200);
      expect(await db('tx.dex_pools').where({ pool_address: pool })).to.have.length(0);
    });

    it('candlestick pools admin: a customer\'s key is 403 (code 20002 Forbidden) on create, activate and deactivate; an operator\'s works; reads stay open', async () => {
      const forbidden = { status: 403, body: { code: 20002, message: 'Forbidden', error: { type: 'ForbiddenError' } } };
      const pool = { chain_type: 'evm', chain_id: 1, network_id: 'eth', pool_address: `0x${randomBytes(20).toString('hex')}`, label: 'security suite' };
      expect(await call(market, 'POST', '/api/v1/admin/pools', { key: keys.customer, body: pool })).to.deep.equal(forbidden);
      const created = await call(market, 'POST', '/api/v1/admin/pools', { key: keys.operator, body: pool });
      expect(created.status).to.equal(200);
      expect(created.body.data).to.include({ pool_address: pool.pool_address, is_active: false });
      const id = created.body.data.id as number;
      for (const verb of ['activate', 'deactivate']) expect(await call(market, 'PATCH', `/api/v1/admin/pools/${id}/${verb}`, { key: keys.customer }), verb).to.deep.equal(forbidden);
      expect((await db('kline.pools').where({ id }).first()).is_active).to.equal(false);
      expect((await call(market, 'PATCH', `/api/v1/admin/pools/${id}/activate`, { key: keys.operator })).body.data.is_active).to.equal(true);
      expect((await call(market, 'PATCH', `/api/v1/admin/pools/${id}/deactivate`, { key: keys.operator })).body.data.is_active).to.equal(false);
      // Reading takes any key.
      expect((await call(market, 'GET', `/api/v1/admin/pools/${id}`, { key: keys.customer })).body.data).to.include({ id, is_active: false });
      // Without a key at all: the spec's 401 Unauthorized, as before.
      expect(await call(market, 'POST', '/api/v1/admin/pools', { body: pool })).to.deep.equal({ status: 401, body: { code: 20001, message: 'Unauthorized', error: { type: 'UnauthorizedError' } } });
    });
  });

  describe('the candlestick debug routes on the ops listener only (KLINE_DEBUG_ON_OPS)', () => {
    it('the public port answers them 404; the ops listener serves them, still without a key (the spec)', async () => {
      const ops = { ...market, base: market.ops };
      for (const [method, path] of [['GET', '/api/v1/admin/debug/hub/status'], ['GET', '/api/v1/admin/debug/ingester/status'], ['POST', '/api/v1/admin/debug/ingester/ensure']]) {
        const r = await call(market, method, path);
        expect(r.status, `${method} ${path} on the public port`).to.equal(404);
        expect(r.body).to.deep.include({ code: 10003 });
      }
      const hub = await call(ops, 'GET', '/api/v1/admin/debug/hub/status');
      expect(hub.status).to.equal(200);
      expect(hub.body).to.include.keys('wsCount', 'poolCount', 'pools');
      expect(await call(ops, 'POST', '/api/v1/admin/debug/ingester/ensure')).to.deep.equal({ status: 200, body: 'ok' });
      // The rest of the API is not on the ops listener.
      expect((await call(ops, 'GET', '/api/v1/admin/pools', { key: keys.customer })).status).to.equal(404);
    });
  });

  describe('secrets stay out of the logs; upstream failures out of the answers', () => {
    it('the 502 of the single-transaction GET names the network only; the log has the detail but neither a provider key nor the Redis password', async () => {
      const hash = `0x${randomBytes(32).toString('hex')}`;
      const r = await call(tx, 'GET', `/tx/api/v1/transactions/${hash}?chain_type=ethereum&chain_id=1&no_cache=true`, { key: keys.customer });
      expect(r).to.deep.equal({ status: 502, body: { code: 502, msg: 'chain origin of ethereum-mainnet failed', data: null } });
      expect(JSON.stringify(r.body)).to.not.match(new RegExp(`127\\.0\\.0\\.1|${closedPort}|ECONNREFUSED`));
      // The failure is logged with what an operator needs.
      await waitFor(() => tx.proc.output().includes('"origin_fetch_failed"'), { timeoutMs: 5_000, what: 'the origin_fetch_failed log line' });
      const failure = tx.proc.output().split('\n').find((l) => l.includes('"origin_fetch_failed"'))!;
      expect(JSON.parse(failure)).to.include({ network: 'ethereum-mainnet', txHash: hash, kind: 'unreachable' });
      expect(JSON.parse(failure).err).to.contain('ECONNREFUSED');
    });

    it('the boot line shows every node and Redis by host, with keys and passwords masked; no line of the app\'s output carries them', () => {
      const output = tx.proc.output();
      const boot = output.split('\n').find((l) => l.includes('"config_loaded"'));
      expect(boot, 'config_loaded line').to.not.equal(undefined);
      const config = JSON.parse(boot!).config as Record<string, string>;
      expect(config.CHAIN_RPC_DEFAULT_BASE).to.match(/^http:\/\/127\.0\.0\.1:\d+\/\*\*\*$/);
      expect(config.CHAIN_RPC_URLS).to.equal(`ethereum-mainnet=http://127.0.0.1:${closedPort}/***/?apikey=***`);
      expect(config.REDIS_URL).to.equal(`redis://default:***@127.0.0.1:${redis.port}/0`);
      for (const secret of [PROVIDER_KEY, QUERY_KEY, REDIS_PASSWORD, encodeURIComponent(REDIS_PASSWORD)]) expect(output, 'tx-gateway output').to.not.contain(secret);
    });
  });

  describe('POST /webhook with the stream\'s security token configured', () => {
    const body = readFixtureBytes('evm/eth-mainnet-17053184.block_fulltx.json');
    const headers = { 'content-type': 'application/json', 'cl-stream-network': 'ethereum-mainnet' };
    const post = (path: string, extra: Record<string, string>) => fetch(`${ingest.base}${path}`, { method: 'POST', body, headers: { ...headers, ...extra } }).then(json);
    // As QuickNode signs a delivery: HMAC-SHA256 with the stream's token over nonce + timestamp + payload, hex.
    const signed = (token = QN_TOKEN) => {
      const nonce = randomBytes(16).toString('hex');
      const timestamp = String(Math.floor(Date.now() / 1000));
      const signature = createHmac('sha256', token).update(nonce + timestamp + body.toString('utf8')).digest('hex');
      return { 'x-qn-nonce': nonce, 'x-qn-timestamp': timestamp, 'x-qn-signature': signature };
    };

    it('refuses an unsigned or wrongly signed body with 401, and takes a signed one; records keep the route they came by', async () => {
      expect(await post('/webhook', {})).to.deep.equal({ status: 401, body: { code: 401, message: 'missing webhook signature', data: null } });
      expect(await post('/tx/api/v1/webhook', signed('another stream\'s token'))).to.deep.equal({ status: 401, body: { code: 401, message: 'invalid webhook signature', data: null } });
      // The stream secret is not what /webhook asks for (the spec): it does not stand in for a signature.
      expect((await post('/webhook', { 'content-secret-x': STREAM_SECRET })).status).to.equal(401);
      expect(await post('/webhook', signed())).to.deep.equal({ status: 200, body: { code: 0, message: 'ok', data: null } });
      expect(await post('/stream', { 'content-secret-x': STREAM_SECRET })).to.deep.equal({ status: 200, body: { code: 0, message: 'ok', data: null } });
      const records = await readTopic(prefix + TOPICS.chainRaw.name, 2);
      expect(records.map((m) => m.headers!.ingest_route!.toString()).sort()).to.deep.equal(['stream', 'webhook']);
      for (const m of records) expect(Buffer.compare(m.value!, body)).to.equal(0);
    });

    it('a production start with no verification method stops at boot unless the opt-out is said', async () => {
      const [port, ops] = await Promise.all([freePort(), freePort()]);
      const base = { PORT: String(port), OPS_PORT: String(ops), KAFKA_BROKERS: env.kafkaBrokers.join(','), KAFKA_TOPIC_PREFIX: prefix, REDIS_URL: env.redisUrl, STREAM_SECRET, NODE_ENV: 'production' };
      const refused = spawnTs('apps/chain-ingest/src/main.ts', base);
      expect(await refused.exited).to.equal(1);
      expect(refused.output()).to.contain('POST /webhook has no verification method: set WEBHOOK_QUICKNODE_SECURITY_TOKEN');
      const optedOut = spawnTs('apps/chain-ingest/src/main.ts', { ...base, WEBHOOK_ALLOW_UNVERIFIED: 'true' });
      procs.push(optedOut);
      await waitReady(optedOut, ops, 60_000);
      expect(optedOut.output()).to.contain('"webhook_unverified"');
    });
  });
});
