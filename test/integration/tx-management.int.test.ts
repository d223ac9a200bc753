import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { createRedis } from '@chainpipe/redis';
import { toTransactionResult } from '@chainpipe/tx-records';
import { PoolTrades } from '@chainpipe/tx-store';
import { ERC20_TRANSFER } from '../../apps/tx-gateway/src/api-examples';
import { base58Encode, networkByName, tronHexToBase58 } from '@chainpipe/chains';
import { TOPICS, type AddressChangeMessage } from '@chainpipe/contracts';
import { ApiKeyRepository, createDb, type Knex } from '@chainpipe/db';

import { SecretBox } from '@chainpipe/runtime';
import {
  createAppWithKey,
  collectTopic,
  createRegistryTopics,
  documentAssertion,
  freePort,
  jsonOrUndefined,
  parsePrometheusText,
  readFixtureJson,
  spawnTs,
  stopProcess,
  testEnv,
  uniquePrefix,
  waitFor,
  waitReady,
  type RunningProcess,
  type TopicCollector,
} from '@chainpipe/testing';

const SECRET_KEY = randomBytes(32).toString('hex');
const RPC_TIMEOUT_MS = 1000;
const BODY_LIMIT = 64 * 1024;
const RPC_PROXY_MAX_ANSWER = 4096;

const evmAddress = () => `0x${randomBytes(20).toString('hex')}`;
/** A fresh Tron account in its node hex form (`41` + 20 bytes) and its Base58Check form. */
function tronAccount(): { hex: string; base58: string } {
  const hex = `41${randomBytes(20).toString('hex')}`;
  return { hex, base58: tronHexToBase58(hex)! };
}
const solanaAddress = () => base58Encode(randomBytes(32));

interface Reply {
  status: number;
  body: any;
  text: string;
}

/** A node stand-in speaking JSON-RPC 2.0 over HTTP at /rpc/<network>, as the proxy's origins do. */
function startRpcOrigin() {
  const received: { path: string; body: { jsonrpc: string; id: unknown; method: string; params: unknown[] } }[] = [];
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      const body = JSON.parse(raw);
      received.push({ path: req.url ?? '', body });
      const network = networkByName((req.url ?? '').split('/').pop());
      const reply = (payload: object) => {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ jsonrpc: '2.0', id: body.id, ...payload }));
      };
      switch (body.method) {
        case 'eth_chainId':
          return reply({ result: `0x${network!.chainId.toString(16)}` });
        case 'eth_blockNumber':
          return reply({ result: '0x1234ab' });
        case 'eth_getBalance':
          return reply({ result: { echoed: body.params } });
        // Faults of a node, asked for by the call's first param.
        case 'eth_call':
          if (body.params[0] === 'broken') {
            res.statusCode = 500;
            return res.end('upstream exploded');
          }
          if (body.params[0] === 'huge') return reply({ result: 'ab'.repeat(4096) });
          if (body.params[0] === 'silent') return; // never answers
          return reply({ result: '0x' });
        default:
          return reply({ error: { code: -32601, message: `the method ${body.method} does not exist/is not available` } });
      }
    });
  });
  return { server, received };
}

describe('tx-gateway management: addresses, app config, retry status, RPC proxy (real process, Postgres, Kafka)', function () {
  const env = testEnv();
  let db: Knex;
  let prefix: string;
  let gateway: RunningProcess;
  let base: string;
  let opsBase: string;
  let origin: ReturnType<typeof startRpcOrigin>;
  let collector: TopicCollector | undefined;
  const changes = (): { key: string; value: AddressChangeMessage }[] =>
    (collector?.messages ?? []).map((m) => ({ key: m.key!.toString(), value: JSON.parse(m.value!.toString()) as AddressChangeMessage }));
  const apps = { a: '', b: '' };
  const keys = { a: '', b: '', revoked: '', operator: '' };

  async function call(method: string, path: string, opts: { key?: string | null; body?: unknown; raw?: string; headers?: Record<string, string> } = {}): Promise<Reply> {
    const headers: Record<string, string> = { ...opts.headers };
    const key = opts.key === undefined ? keys.a : opts.key;
    if (key !== null) headers['x-api-key'] = key;
    let body: string | undefined = opts.raw;
    if (opts.body !== undefined) body = JSON.stringify(opts.body);
    if (body !== undefined) headers['content-type'] ??= 'application/json';
    const res = await fetch(base + path, { method, headers, body });
    const text = await res.text();
    const parsed = jsonOrUndefined(text);
    await matchesDocument(method, path, res.status, res.headers.get('content-type'), parsed, text);
    return { status: res.status, body: parsed, text };
  }
  // Every answer is also checked against the gateway's own /openapi.json.
  const matchesDocument = documentAssertion(() => base);

  const ok = (data: unknown) => ({ code: 0, message: 'success', data });
  const failed = (status: number, message: string | RegExp) => (r: Reply) => {
    expect(r.status, r.text).to.equal(status);
    expect(r.body.code).to.equal(status);
    expect(r.body.data).to.equal(null);
    expect(Object.keys(r.body).sort()).to.deep.equal(['code', 'data', 'message']);
    if (typeof message === 'string') expect(r.body.message).to.equal(message);
    else expect(r.body.message).to.match(message);
  };

  const contains = async (chainType: string, address: string, key = keys.a) => {
    const r = await call('POST', '/tx/api/v1/addresses/contains', { key, body: { chain_type: chainType, address } });
    expect(r.status, r.text).to.equal(200);
    return r.body.data.is_exist as boolean;
  };

  const rowsOf = async (appId: string, chainType: string): Promise<string[]> =>
    (await db('tx.monitored_addresses').where({ app_id: appId, chain_type: chainType }).select('address')).map((r) => r.address).sort();

  /**
   * The changes published for an application (keyed by its app_id) that `match`, in order, once
   * `count` of them arrived and everything published so far was read (the gateway publishes
   * before it answers, so an unexpected extra change would be among them).
   */
  async function changesOf(appId: string, match: (c: AddressChangeMessage) => boolean, count: number): Promise<AddressChangeMessage[]> {
    const mine = () => changes().filter((c) => c.key === appId && match(c.value)).map((c) => c.value);
    await waitFor(() => mine().length >= count, { timeoutMs: 20_000, what: `${count} address changes of ${appId}` });
    await collector!.settled();
    for (const c of mine()) expect(c.app_id).to.equal(appId);
    return mine();
  }
  const touches = (addresses: string[]) => (c: AddressChangeMessage) => [...c.adds, ...c.removes].some((a) => addresses.includes(a));

  async function metrics(): Promise<ReturnType<typeof parsePrometheusText>> {
    return parsePrometheusText(await (await fetch(`${opsBase}/metrics`)).text());
  }

  async function createApp(label: string): Promise<{ appId: string; token: string; keyId: string }> {
    const app = await createAppWithKey(db, { id: `${env.runId}-${label}`, name: `management test ${label}`, label: 'test' });
    return { appId: app.id, token: app.key, keyId: app.keyId };
  }

  async function startGateway(extra: Record<string, string>): Promise<{ proc: RunningProcess; base: string; opsBase: string }> {
    const port = await freePort();
    const opsPort = await freePort();
    const proc = spawnTs('apps/tx-gateway/src/main.ts', {
      DATABASE_URL: env.databaseUrl,
      REDIS_URL: env.redisUrl,
      KAFKA_BROKERS: env.kafkaBrokers.join(','),
      WEBHOOK_SECRET_KEY: SECRET_KEY,
      PORT: String(port),
      OPS_PORT: String(opsPort),
      BODY_LIMIT_BYTES: String(BODY_LIMIT),
      CHAIN_RPC_TIMEOUT_MS: String(RPC_TIMEOUT_MS),
      ...extra,
    });
    await waitReady(proc, opsPort, 90_000);
    return { proc, base: `http://127.0.0.1:${port}`, opsBase: `http://127.0.0.1:${opsPort}` };
  }

  before(async function () {
    this.timeout(90_000);
    db = createDb({ url: env.databaseUrl, poolMax: 3 });
    prefix = uniquePrefix('txm');
    await createRegistryTopics(prefix, [TOPICS.addressesChanges, TOPICS.txPush]);

    const a = await createApp('mgmt-a');
    const b = await createApp('mgmt-b');
    apps.a = a.appId;
    apps.b = b.appId;
    keys.a = a.token;
    keys.b = b.token;
    const revoked = await createApp('mgmt-revoked');
    await new ApiKeyRepository(db).revokeKey(revoked.keyId);
    keys.revoked = revoked.token;
    keys.operator = (await createAppWithKey(db, { id: `${env.runId}-mgmt-ops`, name: 'management test operators', label: 'test', role: 'operator' })).key;

    origin = startRpcOrigin();
    await new Promise<void>((resolve) => origin.server.listen(0, '127.0.0.1', () => resolve()));
    const originPort = (origin.server.address() as AddressInfo).port;
    const closedPort = await freePort();

    collector = await collectTopic(prefix + TOPICS.addressesChanges.name);

    const started = await startGateway({
      KAFKA_TOPIC_PREFIX: prefix,
      CHAIN_RPC_DEFAULT_BASE: `http://127.0.0.1:${originPort}/rpc`,
      CHAIN_RPC_URLS: `polygon-mainnet=http://127.0.0.1:${closedPort}/rpc`,
      // The proxy's own node for base-mainnet; its other networks fall back to the read nodes.
      RPC_PROXY_URLS: `base-mainnet=http://127.0.0.1:${originPort}/proxy/base-mainnet`,
      RPC_PROXY_MAX_ANSWER_BYTES: String(RPC_PROXY_MAX_ANSWER),
    });
    gateway = started.proc;
    base = started.base;
    opsBase = started.opsBase;
  });

  after(async () => {
    if (gateway) expect(await stopProcess(gateway)).to.equal(0);
    await collector?.stop();
    if (origin) {
      origin.server.closeAllConnections();
      await new Promise((resolve) => origin.server.close(resolve));
    }
    await db?.destroy();
  });

  describe('monitored addresses', () => {
    it('adds EVM addresses in any case, stores them lowercase, answers contains per chain and publishes the change', async () => {
      const address = evmAddress();
      const mixed = `0x${address.slice(2).toUpperCase()}`;
      const before = Date.now();
      expect((await call('POST', '/tx/api/v1/addresses', { body: { wallets: [{ chain_type: 'Ethereum', address: [mixed] }] } })).body).to.deep.equal(ok('success'));
      expect(await rowsOf(apps.a, 'ethereum')).to.include(address);
      expect(await contains('ethereum', address)).to.equal(true);
      expect(await contains('ETHEREUM', mixed)).to.equal(true);
      expect(await contains('bsc', address)).to.equal(false);

      const published = await changesOf(apps.a, touches([address]), 1);
      expect(published).to.have.length(1);
      const [change] = published;
      expect(change).to.include({ app_id: apps.a, chain_type: 'ethereum' });
      expect(change.adds).to.deep.equal([address]);
      expect(change.removes).to.deep.equal([]);
      expect(change.changed_at).to.be.within(before - 5_000, Date.now());
    });

    it('stores Tron addresses in Base58 whatever form was sent; contains and delete work with any form', async () => {
      const t = tronAccount();
      expect((await call('POST', '/tx/api/v1/addresses', { body: { wallets: [{ chain_type: 'tron', address: [t.hex] }] } })).body).to.deep.equal(ok('success'));
      expect(await rowsOf(apps.a, 'tron')).to.deep.equal([t.base58]);
      expect(await contains('tron', t.base58)).to.equal(true);
      expect(await contains('tron', `0x${t.hex.slice(2)}`)).to.equal(true);
      expect(await contains('tron', t.hex)).to.equal(true);

      expect((await call('POST', '/tx/api/v1/addresses/batch-delete', { body: { wallets: [{ chain_type: 'TRON', address: [`0x${t.hex.slice(2)}`] }] } })).body).to.deep.equal(ok('success'));
      expect(await rowsOf(apps.a, 'tron')).to.deep.equal([]);
      expect(await contains('tron', t.base58)).to.equal(false);

      const mine = await changesOf(apps.a, touches([t.base58]), 2);
      expect(mine.map((c) => c.chain_type)).to.deep.equal(['tron', 'tron']);
      expect(mine.map((c) => [c.adds, c.removes])).to.deep.equal([
        [[t.base58], []],
        [[], [t.base58]],
      ]);
    });

    it('is idempotent: adding twice keeps one row, deleting an absent address succeeds', async () => {
      const s = solanaAddress();
      for (let i = 0; i < 2; i++) expect((await call('POST', '/tx/api/v1/addresses', { body: { wallets: [{ chain_type: 'solana', address: [s, s] }] } })).status).to.equal(200);
      expect((await rowsOf(apps.a, 'solana')).filter((x) => x === s)).to.deep.equal([s]);
      const other = solanaAddress();
      expect((await call('POST', '/tx/api/v1/addresses/batch-delete', { body: { wallets: [{ chain_type: 'solana', address: [other] }] } })).body).to.deep.equal(ok('success'));
      expect(await rowsOf(apps.a, 'solana')).to.include(s);
    });

    it('adds several chains in one request, one change message per chain type', async () => {
      const e = evmAddress();
      const t = tronAccount();
      const btc = readFixtureJson<{ tx: { vout: { scriptPubKey: { address?: string } }[] }[] }>('bitcoin/btc-mainnet-766393.getblock_verbosity2.json')
        .tx.flatMap((x) => x.vout.map((o) => o.scriptPubKey.address))
        .find((a): a is string => typeof a === 'string')!;
      const r = await call('POST', '/tx/api/v1/addresses', {
        key: keys.b,
        body: { wallets: [{ chain_type: 'base', address: [e] }, { chain_type: 'tron', address: [t.base58] }, { chain_type: 'bitcoin', address: [btc] }] },
      });
      expect(r.body).to.deep.equal(ok('success'));
      const mine = await changesOf(apps.b, touches([e, t.base58, btc]), 3);
      expect(mine).to.have.length(3);
      const byChain = Object.fromEntries(mine.map((c) => [c.chain_type, c.adds]));
      expect(byChain).to.deep.equal({ base: [e], tron: [t.base58], bitcoin: [btc] });
      expect(await contains('bitcoin', btc, keys.b)).to.equal(true);
    });

    it('contains checks the global table: app B sees app A’s address, and B’s delete leaves A’s row alone', async () => {
      const address = evmAddress();
      await call('POST', '/tx/api/v1/addresses', { body: { wallets: [{ chain_type: 'polygon', address: [address] }] } });
      expect(await contains('polygon', address, keys.b)).to.equal(true);
      expect((await call('POST', '/tx/api/v1/addresses/batch-delete', { key: keys.b, body: { wallets: [{ chain_type: 'polygon', address: [address] }] } })).status).to.equal(200);
      expect(await rowsOf(apps.a, 'polygon')).to.include(address);
      expect(await contains('polygon', address, keys.b)).to.equal(true);
    });

    it('PATCH applies adds and removes together; the earlier layout POST /api/v1/address does the same', async () => {
      const [x, y, z, w] = [evmAddress(), evmAddress(), evmAddress(), evmAddress()];
      expect((await call('PATCH', '/tx/api/v1/addresses', { body: { chain_type: 'arbitrum', adds: [x, y] } })).body).to.deep.equal(ok('success'));
      expect((await call('PATCH', '/tx/api/v1/addresses', { body: { chain_type: 'arbitrum', adds: [z], removes: [x] } })).body).to.deep.equal(ok('success'));
      expect(await rowsOf(apps.a, 'arbitrum')).to.deep.equal([y, z].sort());
      expect((await call('POST', '/api/v1/address', { body: { chain_type: 'Arbitrum', adds: [w], removes: [y, z] } })).body).to.deep.equal(ok('success'));
      expect(await rowsOf(apps.a, 'arbitrum')).to.deep.equal([w]);
      const mine = await changesOf(apps.a, touches([x, y, z, w]), 3);
      expect(mine.map((c) => c.chain_type)).to.deep.equal(['arbitrum', 'arbitrum', 'arbitrum']);
      expect(mine.map((c) => [c.adds, c.removes])).to.deep.equal([
        [[x, y], []],
        [[z], [x]],
        [[w], [y, z]],
      ]);
      // An empty patch changes nothing and publishes nothing.
      await collector!.settled();
      const count = changes().filter((c) => c.key === apps.a).length;
      expect((await call('PATCH', '/tx/api/v1/addresses', { body: { chain_type: 'arbitrum' } })).body).to.deep.equal(ok('success'));
      await collector!.settled();
      expect(changes().filter((c) => c.key === apps.a).length).to.equal(count);
    });

    it('concurrent changes of one application are published in the order they were stored', async () => {
      const address = evmAddress();
      // Alternate add and remove of one address, all at once: whatever order the requests take,
      // replaying the published changes must end where the table ended.
      const replies = await Promise.all(
        Array.from({ length: 12 }, (_, i) => call('PATCH', '/tx/api/v1/addresses', { body: { chain_type: 'bsc', ...(i % 2 ? { removes: [address] } : { adds: [address] }) } })),
      );
      for (const r of replies) expect(r.status, r.text).to.equal(200);
      const published = await changesOf(apps.a, touches([address]), 12);
      expect(published).to.have.length(12);
      const stamps = published.map((c) => c.changed_at);
      expect(stamps).to.deep.equal([...stamps].sort((x, y) => x - y));
      const replayed = published.reduce((present, c) => (c.adds.includes(address) ? true : c.removes.includes(address) ? false : present), false);
      expect(replayed).to.equal((await rowsOf(apps.a, 'bsc')).includes(address));
    });

    it('serves the earlier layout: /api/v1/address/add, /contains, /remove', async () => {
      const t = tronAccount();
      expect((await call('POST', '/api/v1/address/add', { body: { wallets: [{ chain_type: 'tron', address: [t.base58] }] } })).body).to.deep.equal(ok('success'));
      const hit = await call('POST', '/api/v1/address/contains', { body: { chain_type: 'tron', address: `0x${t.hex.slice(2)}` } });
      expect(hit.body).to.deep.equal(ok({ is_exist: true }));
      expect((await call('POST', '/api/v1/address/remove', { body: { wallets: [{ chain_type: 'tron', address: [t.hex] }] } })).body).to.deep.equal(ok('success'));
      expect((await call('POST', '/api/v1/address/contains', { body: { chain_type: 'tron', address: t.base58 } })).body).to.deep.equal(ok({ is_exist: false }));
    });

    it('refuses bad input with 400 naming the problem, and writes nothing of a refused request', async () => {
      const good = evmAddress();
      const cases: [string, string, unknown, string | RegExp][] = [
        ['POST', '/tx/api/v1/addresses', { wallets: [{ chain_type: 'ethereum', address: [good, '0x1234'] }] }, 'wallets[0].address[1] "0x1234" is not a valid ethereum address: it must be 0x followed by 40 hex digits'],
        ['POST', '/tx/api/v1/addresses', { wallets: [{ chain_type: 'ethereum', address: [good] }, { chain_type: 'dogecoin', address: [good] }] }, 'wallets[1].chain_type "dogecoin" is not a supported chain type'],
        ['POST', '/tx/api/v1/addresses', { wallets: [{ chain_type: 'ethereum', address: [good] }, { chain_type: 'tron', address: ['TXYZ'] }] }, /wallets\[1\]\.address\[0\] "TXYZ" is not a valid tron address/],
        ['POST', '/tx/api/v1/addresses', { wallets: [] }, 'wallets must NOT have fewer than 1 items'],
        ['POST', '/tx/api/v1/addresses', { wallets: [{ chain_type: 'ethereum', address: [] }] }, 'wallets.0.address must NOT have fewer than 1 items'],
        ['POST', '/tx/api/v1/addresses', { wallets: [{ chain_type: 'ethereum', address: good }] }, 'wallets.0.address must be array'],
        ['POST', '/tx/api/v1/addresses', {}, 'wallets is required'],
        ['POST', '/tx/api/v1/addresses', [good], '(root) must be object'],
        ['POST', '/tx/api/v1/addresses', { wallets: [{ chain_type: 'solana', address: [good, '0OIl0OIl0OIl0OIl0OIl0OIl0OIl0OIl0OIl'] }] }, /wallets\[0\]\.address\[0\] .* is not a valid solana address/],
        ['POST', '/tx/api/v1/addresses/batch-delete', { wallets: [{ chain_type: 'bitcoin', address: ['bc1notreal'] }] }, /is not a valid bitcoin address/],
        ['PATCH', '/tx/api/v1/addresses', { chain_type: 'ethereum', adds: [good], removes: [good.toUpperCase().replace('0X', '0x')] }, `address ${good} is in both adds and removes`],
        ['PATCH', '/tx/api/v1/addresses', { adds: [good] }, 'chain_type is required'],
        ['PATCH', '/tx/api/v1/addresses', { chain_type: 'ethereum', adds: [good], extra: 1 }, 'extra is not allowed'],
        ['POST', '/tx/api/v1/addresses/contains', { chain_type: 'ethereum' }, 'address is required'],
        ['POST', '/tx/api/v1/addresses/contains', { chain_type: 'ethereum', address: 'nope' }, 'address "nope" is not a valid ethereum address: it must be 0x followed by 40 hex digits'],
        [
          'POST',
          '/tx/api/v1/addresses',
          { wallets: [{ chain_type: 'ethereum', address: Array.from({ length: 600 }, evmAddress) }, { chain_type: 'bsc', address: Array.from({ length: 401 }, evmAddress) }] },
          'at most 1000 addresses per request, got 1001',
        ],
      ];
      for (const [method, path, body, message] of cases) failed(400, message)(await call(method, path, { body }));
      expect(await contains('ethereum', good)).to.equal(false);
    });
  });

  describe('app config', () => {
    const url = 'https://hooks.example.com/chainpipe/cb?tenant=7';

    it('GET answers data null while there is no configuration', async () => {
      expect((await call('GET', '/tx/api/v1/app/config', { key: keys.b })).body).to.deep.equal(ok(null));
    });

    it('POST creates, GET shows the spec fields without the secret, the table holds only ciphertext', async () => {
      const secret = `whsec-${randomBytes(12).toString('hex')}`;
      const t0 = Date.now();
      const post = await call('POST', '/tx/api/v1/app/config', { body: { enable_webhook: true, webhook_url: url, webhook_secret: secret, ws_ack_resend_interval_seconds: 10 } });
      expect(post.body).to.deep.equal(ok('success'));
      const get = await call('GET', '/tx/api/v1/app/config');
      expect(get.text).to.not.include(secret);
      const { created_at, updated_at, ...rest } = get.body.data;
      expect(rest).to.deep.equal({
        app_id: apps.a,
        enable_ws: true,
        enable_webhook: true,
        webhook_url: url,
        ws_ack_resend_interval_seconds: 10,
        webhook_delivery_status: 'active',
        webhook_retrying_since: null,
        webhook_last_failed_transaction_id: null,
        webhook_last_failure_reason: null,
        is_active: true,
      });
      expect(new Date(created_at).toISOString()).to.equal(created_at);
      expect(Date.parse(created_at)).to.be.within(t0 - 5_000, Date.now() + 1_000);
      expect(updated_at).to.equal(created_at);

      const row = await db('tx.app_configs').where({ app_id: apps.a }).first();
      expect(row.webhook_secret_enc).to.match(/^v1\./);
      expect(row.webhook_secret_enc).to.not.include(secret);
      expect(new SecretBox(SECRET_KEY).open(row.webhook_secret_enc)).to.equal(secret);
    });

    it('PUT changes only the fields given; the secret stays; created_at stays', async () => {
      const before = await db('tx.app_configs').where({ app_id: apps.a }).first();
      const beforeView = (await call('GET', '/tx/api/v1/app/config')).body.data;
      // The database clock past the stored updated_at, so the PUT's one is later.
      await waitFor(async () => (await db.raw('select clock_timestamp() as t')).rows[0].t.getTime() > Date.parse(beforeView.updated_at), { what: 'the database clock past updated_at' });
      expect((await call('PUT', '/tx/api/v1/app/config', { body: { enable_ws: false, is_active: false } })).body).to.deep.equal(ok('success'));
      const after = (await call('GET', '/tx/api/v1/app/config')).body.data;
      expect(after).to.deep.equal({ ...beforeView, enable_ws: false, is_active: false, updated_at: after.updated_at });
      expect(Date.parse(after.updated_at)).to.be.greaterThan(Date.parse(beforeView.updated_at));
      const row = await db('tx.app_configs').where({ app_id: apps.a }).first();
      expect(row.webhook_secret_enc).to.equal(before.webhook_secret_enc);
    });

    it('PUT rotates and clears the secret; null clears the URL', async () => {
      const rotated = `rotated-${randomBytes(8).toString('hex')}`;
      expect((await call('PUT', '/tx/api/v1/app/config', { body: { webhook_secret: rotated } })).status).to.equal(200);
      let row = await db('tx.app_configs').where({ app_id: apps.a }).first();
      expect(new SecretBox(SECRET_KEY).open(row.webhook_secret_enc)).to.equal(rotated);
      expect((await call('GET', '/tx/api/v1/app/config')).text).to.not.include(rotated);
      expect((await call('PUT', '/tx/api/v1/app/config', { body: { webhook_secret: null, webhook_url: null } })).status).to.equal(200);
      row = await db('tx.app_configs').where({ app_id: apps.a }).first();
      expect(row.webhook_secret_enc).to.equal(null);
      expect(row.webhook_url).to.equal(null);
    });

    it('POST replaces: fields not given go back to their defaults, created_at is kept', async () => {
      const created = (await call('GET', '/tx/api/v1/app/config')).body.data.created_at;
      await call('PUT', '/tx/api/v1/app/config', { body: { webhook_secret: 'to-be-cleared', webhook_url: url } });
      expect((await call('POST', '/tx/api/v1/app/config', { body: { enable_webhook: true } })).body).to.deep.equal(ok('success'));
      const view = (await call('GET', '/tx/api/v1/app/config')).body.data;
      expect(view).to.include({ enable_ws: true, enable_webhook: true, webhook_url: null, ws_ack_resend_interval_seconds: 30, is_active: true, created_at: created });
      expect((await db('tx.app_configs').where({ app_id: apps.a }).first()).webhook_secret_enc).to.equal(null);
    });

    it('refuses bad fields with 400 naming them, hostile webhook targets included, and changes nothing', async () => {
      const before = (await call('GET', '/tx/api/v1/app/config')).body.data;
      const cases: [string, unknown, string | RegExp][] = [
        ['POST', { webhook_url: 'http://127.0.0.1/hook' }, /^webhook_url must use https/],
        ['POST', { webhook_url: 'https://127.0.0.1/hook' }, 'webhook_url must not point to a loopback, private, link-local or reserved address'],
        ['PUT', { webhook_url: 'https://[::1]/' }, 'webhook_url must not point to a loopback, private, link-local or reserved address'],
        ['PUT', { webhook_url: 'https://169.254.169.254/latest/meta-data/' }, 'webhook_url must not point to a loopback, private, link-local or reserved address'],
        ['PUT', { webhook_url: 'https://user:pw@hooks.example.com/' }, 'webhook_url must not contain credentials'],
        ['PUT', { webhook_url: 'file:///etc/passwd' }, 'webhook_url must use https'],
        ['PUT', { webhook_url: 'javascript:alert(1)' }, 'webhook_url must use https'],
        ['PUT', { webhook_url: 'https://localhost:8080/' }, 'webhook_url must name a public host'],
        ['PUT', { webhook_url: 'not a url' }, /^webhook_url must not contain whitespace/],
        ['PUT', { webhook_url: 'hooks.example.com' }, 'webhook_url must be an absolute URL'],
        ['PUT', { webhook_url: 7 }, 'webhook_url must be string,null'],
        ['PUT', { webhook_secret: 'line\r\nX-Evil: 1' }, /^webhook_secret must match pattern/],
        ['PUT', { ws_ack_resend_interval_seconds: 0 }, 'ws_ack_resend_interval_seconds must be >= 1'],
        ['PUT', { ws_ack_resend_interval_seconds: 3601 }, 'ws_ack_resend_interval_seconds must be <= 3600'],
        ['PUT', { ws_ack_resend_interval_seconds: '30' }, 'ws_ack_resend_interval_seconds must be integer'],
        ['PUT', { enable_ws: 'true' }, 'enable_ws must be boolean'],
        ['PUT', { is_active: 1 }, 'is_active must be boolean'],
        ['PUT', { enable_websocket: true }, 'enable_websocket is not allowed'],
        ['POST', { is_active: false }, 'is_active can only be changed with PUT'],
        ['POST', 'just a string', '(root) must be object'],
      ];
      for (const [method, body, message] of cases) failed(400, message)(await call(method, '/tx/api/v1/app/config', { body }));
      expect((await call('GET', '/tx/api/v1/app/config')).body.data).to.deep.equal(before);
    });

    it('belongs to its application: B neither sees nor deletes A’s configuration; PUT without one creates B’s from defaults', async () => {
      expect((await call('GET', '/tx/api/v1/app/config', { key: keys.b })).body).to.deep.equal(ok(null));
      expect((await call('DELETE', '/tx/api/v1/app/config', { key: keys.b })).body).to.deep.equal(ok('success'));
      expect((await call('GET', '/tx/api/v1/app/config')).body.data.app_id).to.equal(apps.a);

      expect((await call('PUT', '/tx/api/v1/app/config', { key: keys.b, body: { ws_ack_resend_interval_seconds: 90 } })).body).to.deep.equal(ok('success'));
      const b = (await call('GET', '/tx/api/v1/app/config', { key: keys.b })).body.data;
      expect(b).to.include({ app_id: apps.b, enable_ws: true, enable_webhook: false, webhook_url: null, ws_ack_resend_interval_seconds: 90, is_active: true });
      expect((await call('GET', '/tx/api/v1/app/config')).body.data.ws_ack_resend_interval_seconds).to.equal(30);
    });

    it('DELETE answers success; a later GET answers null; deleting again still succeeds', async () => {
      expect((await call('DELETE', '/tx/api/v1/app/config', { key: keys.b })).body).to.deep.equal(ok('success'));
      expect((await call('GET', '/tx/api/v1/app/config', { key: keys.b })).body).to.deep.equal(ok(null));
      expect((await call('DELETE', '/tx/api/v1/app/config', { key: keys.b })).body).to.deep.equal(ok('success'));
      expect((await call('GET', '/tx/api/v1/app/config')).body.data.app_id).to.equal(apps.a);
    });
  });

  describe('webhook retry status', () => {
    it('defaults for an application without configuration or queue', async () => {
      expect((await call('GET', '/tx/api/v1/app/webhook/retry/status', { key: keys.b })).body).to.deep.equal(
        ok({
          app_id: apps.b,
          enable_webhook: false,
          webhook_delivery_status: 'active',
          webhook_retrying_since: null,
          webhook_last_failed_transaction_id: null,
          webhook_last_failure_reason: null,
          pending: 0,
          next_retry_at: null,
        }),
      );
    });

    it('counts the application’s own queue and shows the delivery state as stored', async () => {
      expect((await call('PUT', '/tx/api/v1/app/config', { body: { enable_webhook: true } })).status).to.equal(200);
      const nowMs = Date.now();
      const nextAttempt = nowMs + 4_250;
      await db('tx.webhook_queue').insert(
        [0, 1, 2].map((i) => ({ app_id: apps.a, tx_id: 9_000_000 + i, tx_status: 'success', payload: JSON.stringify([{ n: i }]), attempts: 1, first_failed_at: nowMs - 1_000 })),
      );
      // B's earlier entry must not show up in A's status.
      await db('tx.webhook_queue').insert({ app_id: apps.b, tx_id: 9_000_100, tx_status: 'success', payload: '[]', attempts: 1, first_failed_at: nowMs });
      const since = Math.floor(nowMs / 1000) - 600;
      await db('tx.app_configs').where({ app_id: apps.a }).update({ webhook_delivery_status: 'retrying', webhook_retrying_since: since, webhook_last_failure_reason: 'HTTP 503 from receiver', webhook_next_attempt_at: nextAttempt });

      const status = await call('GET', '/tx/api/v1/app/webhook/retry/status');
      expect(status.body).to.deep.equal(
        ok({
          app_id: apps.a,
          enable_webhook: true,
          webhook_delivery_status: 'retrying',
          webhook_retrying_since: since,
          webhook_last_failed_transaction_id: null,
          webhook_last_failure_reason: 'HTTP 503 from receiver',
          pending: 3,
          next_retry_at: Math.floor(nextAttempt / 1000),
        }),
      );
      const config = (await call('GET', '/tx/api/v1/app/config')).body.data;
      expect(config).to.include({ webhook_delivery_status: 'retrying', webhook_retrying_since: since, webhook_last_failure_reason: 'HTTP 503 from receiver' });
      const b = (await call('GET', '/tx/api/v1/app/webhook/retry/status', { key: keys.b })).body.data;
      // B has no configuration: its queue is kept but parked, so no retry is due.
      expect([b.pending, b.next_retry_at]).to.deep.equal([1, null]);
    });
  });

  describe('pool trades and the manual webhook retry', () => {
    it('registers a pool, serves its FIFO (both query spellings, limit), removes it; bad input is 400', async () => {
      const pool = evmAddress();
      // Registering and removing take an operator's key; reading the trades any key (D171).
      expect((await call('POST', '/tx/api/v1/dex-pools', { key: keys.operator, body: { chainType: 'Ethereum', chainId: 1, poolAddress: pool.toUpperCase().replace('0X', '0x') } })).body).to.deep.equal(ok('success'));
      expect(await db('tx.dex_pools').where({ chain_type: 'ethereum', chain_id: 1, pool_address: pool })).to.have.length(1);
      expect((await call('GET', `/tx/api/v1/dex-pools/${pool}/trades?chainType=ethereum&chainId=1`)).body).to.deep.equal(ok({ items: [] }));
      // What tx-matcher appends (same Redis, the gateway's key prefix).
      const redis = createRedis({ url: env.redisUrl, keyPrefix: 'chainpipe:' });
      const trades = new PoolTrades(redis);
      // A real ERC-20 transfer (the API document's example) under two hashes.
      const trade = (hash: string) => toTransactionResult({ ...ERC20_TRANSFER, tx_hash: hash });
      const [aa, bb] = [`0x${'aa'.repeat(32)}`, `0x${'bb'.repeat(32)}`];
      await trades.append('ethereum', 1, pool, '1', aa, trade(aa));
      await trades.append('ethereum', 1, pool, '2', bb, trade(bb));
      const both = await call('GET', `/tx/api/v1/dex-pools/${pool}/trades?chain_type=ethereum&chain_id=1`);
      // Newest first, as stored (JSON drops what the record leaves undefined).
      expect(both.body.data.items).to.deep.equal(JSON.parse(JSON.stringify([trade(bb), trade(aa)])));
      expect(both.body.data.items.map((t: { txHash: string }) => t.txHash)).to.deep.equal([bb, aa]);
      expect((await call('GET', `/tx/api/v1/dex-pools/${pool}/trades?chainType=ethereum&chainId=1&limit=1`)).body.data.items).to.have.length(1);
      failed(400, 'limit must be an integer from 1 to 100')(await call('GET', `/tx/api/v1/dex-pools/${pool}/trades?chainType=ethereum&chainId=1&limit=0`));
      failed(400, 'chainType is required')(await call('GET', `/tx/api/v1/dex-pools/${pool}/trades`));
      failed(400, /^poolAddress /)(await call('POST', '/tx/api/v1/dex-pools', { key: keys.operator, body: { chainType: 'ethereum', chainId: 1, poolAddress: 'nope' } }));
      failed(403, 'operator key required')(await call('POST', '/tx/api/v1/dex-pools', { body: { chainType: 'ethereum', chainId: 1, poolAddress: evmAddress() } }));
      failed(403, 'operator key required')(await call('DELETE', `/tx/api/v1/dex-pools/${pool}?chainType=ethereum&chainId=1`));
      expect(await db('tx.dex_pools').where({ chain_type: 'ethereum', chain_id: 1, pool_address: pool })).to.have.length(1);
      expect((await call('DELETE', `/tx/api/v1/dex-pools/${pool}?chainType=ethereum&chainId=1`, { key: keys.operator })).body).to.deep.equal(ok('success'));
      expect((await call('GET', `/tx/api/v1/dex-pools/${pool}/trades?chainType=ethereum&chainId=1`)).body).to.deep.equal(ok({ items: [] }));
      await redis.quit();
    });

    it('POST /app/webhook/retry answers the nested envelope; with the webhook off nothing is attempted and the queue stays', async () => {
      // B's webhook is off (app config tests) and one row of B is queued (retry status tests): parked, no retry due.
      const queued = await db('tx.webhook_queue').where({ app_id: apps.b });
      const r = await call('POST', '/tx/api/v1/app/webhook/retry', { key: keys.b });
      expect(r.status).to.equal(200);
      expect(r.body).to.deep.equal(
        ok({
          code: 0,
          message: 'success',
          data: { attempted: 0, delivered: 0, failed: 0, finalFailed: false, nextRetryAt: null, pending: queued.length },
        }),
      );
    });
  });

  describe('RPC proxy', () => {
    const rpc = (path: string, network: string | null, body?: unknown, key?: string) =>
      call('POST', path, { key, body, headers: network === null ? {} : { 'x-chain-net': network } });

    it('forwards to the origin of the x-chain-net network and answers code 1 with the result', async () => {
      const r = await rpc('/api/v1/rpcproxy', 'bsc-mainnet', { method: 'eth_chainId' });
      expect(r.body).to.deep.equal({ code: 1, msg: 'success', data: `0x${networkByName('bsc-mainnet')!.chainId.toString(16)}` });
      const last = origin.received.at(-1)!;
      expect(last.path).to.equal('/rpc/bsc-mainnet');
      expect(last.body).to.include({ jsonrpc: '2.0', method: 'eth_chainId' });
      expect(last.body.params).to.deep.equal([]);
    });

    it('defaults to eth_blockNumber without a body, passes params through, and serves /tx/api/v1/rpcproxy', async () => {
      const r = await call('POST', '/tx/api/v1/rpcproxy', { headers: { 'x-chain-net': 'Ethereum-Mainnet' } });
      expect(r.body).to.deep.equal({ code: 1, msg: 'success', data: '0x1234ab' });
      expect(origin.received.at(-1)!.body.method).to.equal('eth_blockNumber');
      const params = [evmAddress(), 'latest', { nested: [1, 'two', null] }];
      const echoed = await rpc('/tx/api/v1/rpcproxy', 'base-mainnet', { jsonrpc: '2.0', id: 99, method: 'eth_getBalance', params });
      expect(echoed.body).to.deep.equal({ code: 1, msg: 'success', data: { echoed: params } });
      // base-mainnet has a node of the proxy's own in RPC_PROXY_URLS.
      expect(origin.received.at(-1)!.path).to.equal('/proxy/base-mainnet');
    });

    it('refuses what is not a read-only call of the network\'s family with 400, before any node is asked', async () => {
      const asked = origin.received.length;
      for (const [network, method] of [
        ['ethereum-mainnet', 'admin_nodeInfo'],
        ['ethereum-mainnet', 'debug_traceTransaction'],
        ['ethereum-mainnet', 'personal_unlockAccount'],
        ['ethereum-mainnet', 'eth_sendRawTransaction'],
        ['tron-mainnet', 'admin_peers'],
        ['bitcoin-mainnet', 'stop'],
        ['bitcoin-mainnet', 'setban'],
        ['bitcoin-mainnet', 'invalidateblock'],
        ['bitcoin-mainnet', 'scantxoutset'],
        ['bitcoin-mainnet', 'sendtoaddress'],
        ['bitcoin-mainnet', 'eth_blockNumber'],
        ['solana-mainnet', 'requestAirdrop'],
        ['solana-mainnet', 'sendTransaction'],
        ['bsc-mainnet', 'getSlot'],
      ]) {
        const r = await rpc('/api/v1/rpcproxy', network, { method, params: [] });
        expect([r.status, r.body], `${network} ${method}`).to.deep.equal([400, { code: 400, msg: `method ${method} is not allowed on ${network}: the proxy forwards read-only calls only`, data: null }]);
      }
      expect(origin.received.length).to.equal(asked);
      const read = await rpc('/api/v1/rpcproxy', 'bitcoin-mainnet', { method: 'getblockcount' });
      expect(origin.received.at(-1)!.body.method).to.equal('getblockcount');
      expect(read.status).to.equal(400); // the stand-in knows no Bitcoin: a -32601 of the node's own
    });

    it('an answer over RPC_PROXY_MAX_ANSWER_BYTES is a 502, not passed on', async () => {
      const r = await rpc('/api/v1/rpcproxy', 'bsc-mainnet', { method: 'eth_call', params: ['huge'] });
      expect([r.status, r.body]).to.deep.equal([502, { code: 502, msg: `origin answered more than ${RPC_PROXY_MAX_ANSWER} bytes`, data: null }]);
    });

    it('missing x-chain-net → 500, unknown network → 400, bad method or params → 400, in the msg envelope', async () => {
      const missing = await rpc('/api/v1/rpcproxy', null, { method: 'eth_blockNumber' });
      expect([missing.status, missing.body]).to.deep.equal([500, { code: 500, msg: 'x-chain-net header required', data: null }]);
      const unknown = await rpc('/api/v1/rpcproxy', 'dogecoin-mainnet');
      expect([unknown.status, unknown.body]).to.deep.equal([400, { code: 400, msg: 'unknown network "dogecoin-mainnet" in x-chain-net', data: null }]);
      const method = await rpc('/api/v1/rpcproxy', 'bsc-mainnet', { method: 'eth_call"; rm -rf' });
      expect([method.status, method.body]).to.deep.equal([400, { code: 400, msg: 'method must match pattern "^[A-Za-z0-9_]{1,100}$"', data: null }]);
      const params = await rpc('/api/v1/rpcproxy', 'bsc-mainnet', { method: 'eth_chainId', params: 'x' });
      expect([params.status, params.body]).to.deep.equal([400, { code: 400, msg: 'params must be array', data: null }]);
    });

    it('a JSON-RPC error of the node carries its code and message: 400 for a refused call (unknown method), 502 for a failing node', async () => {
      const r = await rpc('/api/v1/rpcproxy', 'bsc-mainnet', { method: 'eth_blobBaseFee' });
      expect([r.status, r.body]).to.deep.equal([400, { code: 400, msg: 'origin error -32601: the method eth_blobBaseFee does not exist/is not available', data: null }]);
      const broken = await rpc('/api/v1/rpcproxy', 'bsc-mainnet', { method: 'eth_call', params: ['broken'] });
      expect([broken.status, broken.body]).to.deep.equal([502, { code: 502, msg: 'origin answered HTTP 500', data: null }]);
    });

    it('a silent node → 504 soon after CHAIN_RPC_TIMEOUT_MS; an unreachable one → 502', async () => {
      const t0 = Date.now();
      const r = await rpc('/api/v1/rpcproxy', 'bsc-mainnet', { method: 'eth_call', params: ['silent'] });
      const took = Date.now() - t0;
      expect([r.status, r.body]).to.deep.equal([504, { code: 504, msg: `origin did not answer eth_call within ${RPC_TIMEOUT_MS} ms`, data: null }]);
      expect(took).to.be.within(RPC_TIMEOUT_MS - 50, RPC_TIMEOUT_MS + 1_500);
      const down = await rpc('/api/v1/rpcproxy', 'polygon-mainnet', { method: 'eth_blockNumber' });
      expect([down.status, down.body]).to.deep.equal([502, { code: 502, msg: 'origin unreachable', data: null }]);
    });

    it('counts calls by network and outcome', async () => {
      const m = await metrics();
      const value = (network: string, outcome: string) => m.samples.find((s) => s.name === 'chainpipe_tx_rpc_proxy_calls_total' && s.labels.network === network && s.labels.outcome === outcome)?.value;
      expect(value('bsc-mainnet', 'ok')).to.be.at.least(1);
      expect(value('bsc-mainnet', 'timeout')).to.equal(1);
      expect(value('polygon-mainnet', 'unreachable')).to.equal(1);
      expect(value('bsc-mainnet', 'rpc_error')).to.equal(1);
      expect(value('bsc-mainnet', 'too_large')).to.equal(1);
      expect(value('bitcoin-mainnet', 'method_refused')).to.equal(6);
    });
  });

  describe('authentication and malformed input', () => {
    it('401 without a key, 403 for an unknown or revoked key, in each group’s envelope', async () => {
      for (const path of ['/tx/api/v1/addresses/contains', '/api/v1/address/contains', '/tx/api/v1/app/config']) {
        failed(401, 'missing X-API-Key')(await call('POST', path, { key: null, body: { chain_type: 'ethereum', address: evmAddress() } }));
        failed(403, 'invalid API key')(await call('POST', path, { key: 'cpk_0123456789abcdef_' + 'A'.repeat(43), body: {} }));
        failed(403, 'invalid API key')(await call('POST', path, { key: keys.revoked, body: {} }));
        failed(403, 'invalid API key')(await call('POST', path, { key: 'garbage', body: {} }));
      }
      const rpc = await call('POST', '/api/v1/rpcproxy', { key: null, headers: { 'x-chain-net': 'bsc-mainnet' } });
      expect([rpc.status, rpc.body]).to.deep.equal([401, { code: 401, msg: 'missing X-API-Key', data: null }]);
      const rpcBad = await call('POST', '/tx/api/v1/rpcproxy', { key: keys.revoked, headers: { 'x-chain-net': 'bsc-mainnet' } });
      expect([rpcBad.status, rpcBad.body]).to.deep.equal([403, { code: 403, msg: 'invalid API key', data: null }]);
    });

    it('malformed JSON → 400, oversized bodies → 413, in each group’s envelope', async () => {
      failed(400, 'invalid JSON')(await call('POST', '/tx/api/v1/addresses', { raw: '{"wallets": [' }));
      failed(400, 'invalid JSON')(await call('PUT', '/tx/api/v1/app/config', { raw: '{enable_ws: true}' }));
      const huge = JSON.stringify({ wallets: [{ chain_type: 'ethereum', address: Array.from({ length: 2_000 }, evmAddress) }] });
      expect(huge.length).to.be.greaterThan(BODY_LIMIT);
      failed(413, 'request body too large')(await call('POST', '/tx/api/v1/addresses', { raw: huge }));
      const rpc = await call('POST', '/api/v1/rpcproxy', { raw: '{"method":', headers: { 'x-chain-net': 'bsc-mainnet' } });
      expect([rpc.status, rpc.body]).to.deep.equal([400, { code: 400, msg: 'invalid JSON', data: null }]);
      const rpcHuge = await call('POST', '/api/v1/rpcproxy', { raw: JSON.stringify({ params: ['x'.repeat(BODY_LIMIT)] }), headers: { 'x-chain-net': 'bsc-mainnet' } });
      expect([rpcHuge.status, rpcHuge.body]).to.deep.equal([413, { code: 413, msg: 'request body too large', data: null }]);
    });
  });

  describe('when the change cannot be published', () => {
    let isolated: { proc: RunningProcess; base: string; opsBase: string };

    before(async function () {
      this.timeout(60_000);
      // A prefix whose topics were never created: every publish fails (the broker itself is up).
      // No push topic either: this copy serves the REST API only.
      isolated = await startGateway({ KAFKA_TOPIC_PREFIX: uniquePrefix('txm-notopic'), KAFKA_PUBLISH_TIMEOUT_MS: '1000', WS_PUSH_ENABLED: 'false' });
    });

    after(async () => {
      if (isolated) expect(await stopProcess(isolated.proc)).to.equal(0);
    });

    it('keeps the stored change and answers success (the table is the truth), logging and counting the failure', async () => {
      const address = evmAddress();
      const res = await fetch(`${isolated.base}/tx/api/v1/addresses`, {
        method: 'POST',
        headers: { 'x-api-key': keys.a, 'content-type': 'application/json' },
        body: JSON.stringify({ wallets: [{ chain_type: 'optimism', address: [address] }] }),
      });
      expect([res.status, await res.json()]).to.deep.equal([200, ok('success')]);
      expect(await rowsOf(apps.a, 'optimism')).to.include(address);
      const m = parsePrometheusText(await (await fetch(`${isolated.opsBase}/metrics`)).text());
      expect(m.samples.find((s) => s.name === 'chainpipe_tx_address_change_publish_failures_total')?.value).to.equal(1);
      const loggedLines = () => isolated.proc.output().split('\n').filter((l) => l.includes('"address_change_publish_failed"'));
      await waitFor(() => loggedLines().length > 0, { what: 'the publish failure log line' });
      const logged = loggedLines().map((l) => JSON.parse(l));
      expect(logged).to.have.length(1);
      expect(logged[0]).to.include({ appId: apps.a });
      expect(logged[0].chainTypes).to.deep.equal(['optimism']);
    });
  });
});
