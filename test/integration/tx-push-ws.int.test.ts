import { randomBytes, randomInt } from 'node:crypto';
import { expect } from 'chai';
import { Webhook } from 'standardwebhooks';
import { TOPICS, loadContracts } from '@chainpipe/contracts';
import { createDb, type Knex } from '@chainpipe/db';
import { SecretBox } from '@chainpipe/runtime';

import {
  WebhookReceiver,
  createAppWithKey,
  connectWs,
  refusedUpgrade,
  type TestWsClient,
  createRegistryTopics,
  evmBlockItem,
  freePort,
  randomSuffix,
  rebaseBlock,
  spawnTs,
  stopProcess,
  streamerBody,
  testEnv,
  uniquePrefix,
  waitFor,
  waitReady,
  type RunningProcess,
} from '@chainpipe/testing';

type Json = any;

/**
 * WebSocket push end to end: a real fixture block posted to chain-ingest's /stream goes through
 * chain-parser, tx-matcher and two tx-gateway copies (separate processes, shared Redis) to real
 * `ws` clients.
 */
describe('WebSocket and webhook push: /stream → parser → matcher → two gateway copies and a dispatcher → ws clients and a receiver', function () {
  this.timeout(180_000);
  const env = testEnv();
  const contracts = loadContracts();
  const secret = randomBytes(12).toString('hex');
  const procs: RunningProcess[] = [];
  let db: Knex;
  let ingest = '';
  const gw: string[] = [];
  const apps = { a: { id: `wsA-${randomBytes(4).toString('hex')}`, key: '' }, b: { id: `wsB-${randomBytes(4).toString('hex')}`, key: '' } };
  const clients: TestWsClient[] = [];
  // Two plain ETH transfers of the fixture block, read from the raw JSON: value > 0, no call data.
  const raw = evmBlockItem();
  const status = new Map<string, string>(raw.receipts.map((r: Json) => [r.transactionHash, r.status]));
  const natives = raw.block.transactions.filter((t: Json) => BigInt(t.value) > 0n && t.input === '0x' && status.get(t.hash) === '0x1');
  const txA = natives[0];
  const txB = natives.find((t: Json) => t.to.toLowerCase() !== txA.to.toLowerCase() && t.from.toLowerCase() !== txA.to.toLowerCase() && t.to.toLowerCase() !== txA.from.toLowerCase());
  const addrA = txA.to.toLowerCase();
  const addrB = txB.to.toLowerCase();
  let hashA = '';
  let hashB = '';
  const secretKey = '42'.repeat(32);
  const hookSecret = `sign-${randomBytes(4).toString('hex')}`;
  const receiver = new WebhookReceiver();
  receiver.status = 204;
  const received = receiver.requests;

  const wsUrl = (i: number, path = '/tx/api/v1/transaction/ws') => gw[i].replace('http', 'ws') + path;
  const open = async (i: number, key: string, extra: Record<string, string> = {}) => {
    const c = await connectWs(wsUrl(i), { 'x-api-key': key, ...extra });
    clients.push(c);
    await c.next((m) => m.type === 'connected');
    return c;
  };
  /** Sends a command and waits for the reply carrying its id. */
  const request = (c: TestWsClient, type: string, data: unknown, id = `${type}-${randomBytes(4).toString('hex')}`) => {
    c.send({ id, type, data });
    return c.next((m) => m.id === id && m.type !== 'transaction');
  };
  /** The first message so far matching, waiting for it when none came yet. */
  const seen = (c: TestWsClient, match: (m: Json) => boolean, timeoutMs = 20_000) => waitFor(() => c.received.find(match), { timeoutMs, intervalMs: 20 });
  const postBlock = async () => {
    const r = rebaseBlock('evm', raw, 3_000_000_000 + randomInt(1_000_000_000), randomSuffix());
    const res = await fetch(`${ingest}/stream`, {
      method: 'POST',
      headers: { 'content-secret-x': secret, 'cl-stream-network': 'ethereum-mainnet', 'content-type': 'application/octet-stream' },
      body: streamerBody([r.item], { network: 'ethereum-mainnet', dataset: 'block_with_receipts', start: r.height }),
    });
    expect(res.status).to.equal(200);
    return r;
  };

  before(async () => {
    db = createDb({ url: env.databaseUrl, poolMax: 2 });
    for (const app of Object.values(apps)) app.key = (await createAppWithKey(db, { id: app.id })).key;
    await receiver.start();
    // A's webhook goes to a receiver on this machine (private targets allowed, as under `make up`).
    await db('tx.app_configs').insert({
      app_id: apps.a.id,
      enable_webhook: true,
      webhook_url: receiver.url,
      webhook_secret_enc: new SecretBox(secretKey).seal(hookSecret),
    });
    await db('tx.monitored_addresses').insert([
      { app_id: apps.a.id, chain_type: 'ethereum', address: addrA },
      { app_id: apps.b.id, chain_type: 'ethereum', address: addrB },
    ]);

    const prefix = uniquePrefix('ws');
    await createRegistryTopics(prefix, [TOPICS.chainRaw, TOPICS.chainFetched, TOPICS.chainTx, TOPICS.addressesChanges, TOPICS.txPush]);
    const common = { KAFKA_BROKERS: env.kafkaBrokers.join(','), KAFKA_TOPIC_PREFIX: prefix, DATABASE_URL: env.databaseUrl, REDIS_URL: env.redisUrl, LOG_LEVEL: 'warn' };
    const ports = await Promise.all(Array.from({ length: 9 }, () => freePort()));
    const [ingestPort, ingestOps, parserOps, matcherOps, gw1, gw1Ops, gw2, gw2Ops, dispatcherOps] = ports;
    const gateway = (port: number, ops: number) =>
      spawnTs('apps/tx-gateway/src/main.ts', {
        ...common,
        PORT: String(port),
        OPS_PORT: String(ops),
        WEBHOOK_SECRET_KEY: secretKey,
        REDIS_KEY_PREFIX: `${prefix}redis:`,
        TX_GATEWAY_PUSH_GROUP: `${prefix}push`,
        WS_MAX_CONNECTIONS_PER_KEY: '4',
      });
    const started: Array<[RunningProcess, number]> = [
      [spawnTs('apps/chain-ingest/src/main.ts', { ...common, STREAM_SECRET: secret, PORT: String(ingestPort), OPS_PORT: String(ingestOps) }), ingestOps],
      [spawnTs('apps/chain-parser/src/main.ts', { ...common, OPS_PORT: String(parserOps), CHAIN_PARSER_GROUP: `${prefix}parser` }), parserOps],
      [spawnTs('apps/tx-matcher/src/main.ts', { ...common, OPS_PORT: String(matcherOps), TX_MATCHER_GROUP: `${prefix}matcher` }), matcherOps],
      [gateway(gw1, gw1Ops), gw1Ops],
      [gateway(gw2, gw2Ops), gw2Ops],
      [
        spawnTs('apps/webhook-dispatcher/src/main.ts', {
          ...common,
          OPS_PORT: String(dispatcherOps),
          WEBHOOK_DISPATCHER_GROUP: `${prefix}dispatcher`,
          WEBHOOK_SECRET_KEY: secretKey,
          ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true',
        }),
        dispatcherOps,
      ],
    ];
    procs.push(...started.map(([p]) => p));
    await Promise.all(started.map(([p, ops]) => waitReady(p, ops, 150_000)));
    ingest = `http://127.0.0.1:${ingestPort}`;
    gw.push(`http://127.0.0.1:${gw1}`, `http://127.0.0.1:${gw2}`);
  });

  const waitForHook = (hash: string) => waitFor(() => received.find((r) => r.body.includes(hash)), { timeoutMs: 60_000, what: `webhook for ${hash}` });

  after(async () => {
    await Promise.all(clients.map((c) => c.close()));
    for (const p of procs) await stopProcess(p);
    await receiver.stop();
    await db('core.apps').whereIn('app_id', [apps.a.id, apps.b.id]).del();
    await db.destroy();
  });

  it('handshake: 426 without upgrade, 400 without a key, 403 with a bad one; connected with a fresh clientId on both paths', async () => {
    const plain = await fetch(`${gw[0]}/tx/api/v1/transaction/ws`, { headers: { 'x-api-key': apps.a.key } });
    expect(plain.status).to.equal(426);
    expect(await refusedUpgrade(wsUrl(0), {})).to.include({ status: 400 });
    expect(await refusedUpgrade(wsUrl(0), { 'x-api-key': 'cpk_nope_nope' })).to.include({ status: 403 });
    expect(await refusedUpgrade(wsUrl(0), { 'x-api-key': apps.a.key, 'x-resendduration': 'soon' })).to.include({ status: 400 });
    const c1 = await open(0, apps.a.key);
    const c2 = await open(1, apps.a.key);
    const c3 = await connectWs(wsUrl(0, '/transaction/transaction/ws'), { 'x-api-key': apps.a.key });
    clients.push(c3);
    const ids = [];
    for (const c of [c1, c2, c3]) {
      const m = await seen(c, (x) => x.type === 'connected');
      expect(m).to.include({ code: 0, msg: 'success' });
      expect(m.data.appId).to.equal(apps.a.id);
      ids.push(m.data.clientId);
    }
    expect(new Set(ids).size).to.equal(3);
    await Promise.all([c1.close(), c2.close(), c3.close()]);
  });

  it('commands: ping, subscribe (lowercased chain), its 400, unsubscribe of all chains, getTxHash 404', async () => {
    const c = await open(0, apps.b.key);
    expect(await request(c, 'ping', {}, 'p1')).to.include({ id: 'p1', type: 'pong', code: 0, data: null, msg: 'success' });
    const sub = await request(c, 'subscribe', { address: addrB, chain_type: 'ETHEREUM' });
    expect(sub).to.include({ type: 'subscribe', code: 0 });
    expect(sub.data).to.include({ address: addrB, chain_type: 'ethereum' });
    expect(sub.data).to.have.property('API Key');
    const bad = await request(c, 'subscribe', { chain_type: 'ethereum' });
    expect(bad).to.include({ type: 'subscribe', code: 400, data: null, msg: 'address and chain_type required' });
    const unsub = await request(c, 'unsubscribe', { address: addrB });
    expect(unsub).to.include({ type: 'unsubscribe', code: 0 });
    expect(unsub.data).to.deep.equal({ address: addrB, chainType: null });
    const missing = await request(c, 'getTxHash', { chain_type: 'ethereum', chain_id: 1, txHash: '0x' + '0'.repeat(64) });
    expect(missing).to.include({ type: 'getTxHash', code: 404, msg: 'transaction not found', data: null });
    await c.close();
  });

  it('a block posted to /stream reaches the monitoring application only, with the right listenAddress; ACK stops re-sending, across copies', async () => {
    const a1 = await open(0, apps.a.key);
    const b1 = await open(0, apps.b.key);
    const b2 = await open(1, apps.b.key);
    const block = await postBlock();
    hashA = block.hashes.get(txA.hash)!;
    hashB = block.hashes.get(txB.hash)!;
    const push = await seen(a1, (m) => m.type === 'transaction' && m.data.txhash === hashA, 60_000);
    expect(contracts.validate('ws/tx/transaction-push', push)).to.deep.equal({ ok: true });
    expect(push.data.listenAddress).to.deep.equal([addrA]);
    expect(push.data).to.include({ chain_type: 'ethereum', chain_id: 1, sender: txA.from.toLowerCase(), receiver: addrA, amount: BigInt(txA.value).toString(), is_reorg_resend: false });
    // B is connected to both copies: each copy delivers to its own connections.
    for (const b of [b1, b2]) await seen(b, (m) => m.type === 'transaction' && m.data.txhash === hashB);
    expect(a1.received.some((m) => m.type === 'transaction' && m.data.txhash === hashB), 'A never sees B').to.equal(false);
    expect([b1, b2].some((b) => b.received.some((m) => m.type === 'transaction' && m.data.txhash === hashA)), 'B never sees A').to.equal(false);

    // getTxHash by messageId, then by chain + hash (the stored record).
    const byId = await request(a1, 'getTxHash', { chain_type: 'ethereum', chain_id: 1, txHash: hashA, messageId: push.id });
    expect(byId).to.include({ type: 'getTxHash', code: 0, msg: 'success' });
    expect(byId.data).to.deep.equal(push.data);
    const byHash = await request(a1, 'getTxHash', { chain_type: 'ethereum', chain_id: 1, txHash: hashA });
    expect(byHash.data.txhash).to.equal(hashA);

    // No ACK, disconnect, reconnect to the other copy within the window: re-sent.
    await a1.close();
    const a2 = await open(1, apps.a.key);
    const again = await seen(a2, (m) => m.type === 'transaction' && m.data.txhash === hashA);
    expect(again.id).to.equal(push.id);
    // ACK, disconnect, reconnect: not re-sent. Resends come before any reply, so after the pong
    // nothing more can come from the store.
    a2.send({ id: 'ack1', type: 'transactionACK', data: { chain_type: 'ethereum', chain_id: 1, txHash: hashA } });
    await request(a2, 'ping', {});
    await a2.close();
    const a3 = await open(0, apps.a.key);
    await request(a3, 'ping', {});
    expect(a3.received.filter((m) => m.type === 'transaction')).to.deep.equal([]);
    await Promise.all([a3.close(), b1.close(), b2.close()]);
  });

  it('the same block reaches A\'s webhook receiver: bare array, Sign, Standard Webhooks signature; B has no webhook', async () => {
    const hit = await waitForHook(hashA);
    expect(hit.headers.sign).to.equal(hookSecret);
    const body = new Webhook(hookSecret, { format: 'raw' }).verify(hit.body, hit.headers as Record<string, string>) as Json[];
    expect(contracts.validate('webhook/tx/transaction-batch', body)).to.deep.equal({ ok: true });
    const t = body.find((x) => x.txHash === hashA);
    expect(t).to.include({ chainType: 'evm', chainId: 1, receiver: addrA, amount: BigInt(txA.value).toString(), transferType: 'NativeCoin' });
    expect(received.some((r) => r.body.includes(hashB)), 'B configured no webhook').to.equal(false);
  });

  it('caps connections per key (429) and lets a new one in once another closed', async () => {
    // B's connections of the test before free their slots a moment after their close too: each
    // of the four is let in once there is room (a 429 until then), one after the other.
    const open4: Awaited<ReturnType<typeof open>>[] = [];
    for (let i = 0; i < 4; i++) open4.push(await waitFor(() => open(0, apps.b.key).catch(() => undefined), { timeoutMs: 10_000, intervalMs: 100, what: `B's connection ${i + 1} of 4` }));
    expect(await refusedUpgrade(wsUrl(0), { 'x-api-key': apps.b.key })).to.include({ status: 429 });
    await open4[0].close();
    // the gateway frees the slot when it sees the close (its count is in Redis, shared by the copies): a moment after the client's close
    const again = await waitFor(() => open(0, apps.b.key).catch(() => undefined), { timeoutMs: 10_000, intervalMs: 100, what: 'a connection in the freed slot' });
    await Promise.all([again, ...open4].map((c) => c.close()));
  });
});
