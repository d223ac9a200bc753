import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { networkByName } from '@chainpipe/chains';
import { TOPICS, type TxPushMessage } from '@chainpipe/contracts';
import { createDb, type Knex } from '@chainpipe/db';
import { createRedis } from '@chainpipe/redis';

import { topicMessage, createAppWithKey,connectWs, createRegistryTopics, evmBlockItem, freePort, parsePrometheusText, produceJson, spawnTs, stopProcess, testEnv, uniquePrefix, waitFor, waitReady, type RunningProcess, type TestWsClient } from '@chainpipe/testing';
import { parseEvmPayload } from '@chainpipe/tx-parsers';

type Json = any;

/**
 * tx-gateway's WebSocket push on its own (a real process, Redis, tx.push.v1 written by the test
 * as tx-matcher writes it): the periodic resend of unacknowledged pushes, a replayed push not
 * sent twice to a connection, a connection that stopped answering pings closed, and a client that
 * stopped reading cut off without holding up the others.
 */
describe('WebSocket push: periodic resend, replayed pushes, dead connections (tx-gateway process)', function () {
  this.timeout(120_000);
  const env = testEnv();
  const network = networkByName('ethereum-mainnet')!;
  const ctx = { chainType: network.chainType, chainId: network.chainId, family: network.family, nativeSymbol: network.nativeSymbol, nativeDecimals: network.nativeDecimals };
  const txs = parseEvmPayload([evmBlockItem()], ctx).blocks[0].transactions;
  let db: Knex;
  let gateway: RunningProcess | undefined;
  let base = '';
  let opsBase = '';
  let pushTopic = '';
  const clients: TestWsClient[] = [];
  const app = { id: `wsr-${randomBytes(4).toString('hex')}`, key: '' };
  const prefix = uniquePrefix('wsr');

  const push = (i: number, messageId = randomBytes(16).toString('hex')): TxPushMessage => {
    const tx = { ...txs[i], tx_hash: `0x${randomBytes(32).toString('hex')}` };
    return topicMessage(TOPICS.txPush, { message_id: messageId, app_id: app.id, tx_id: String(1_000_000 + i), network: 'ethereum-mainnet', listen_address: [tx.sender!], is_reorg_resend: false, orphaned: false, ws: true, webhook: false, matched_at: Date.now(), tx });
  };
  const publish = (...pushes: TxPushMessage[]) => produceJson(pushTopic, pushes.map((p) => ({ key: p.app_id, value: p })));
  const open = async (headers: Record<string, string> = {}) => {
    const c = await connectWs(`${base.replace('http', 'ws')}/tx/api/v1/transaction/ws`, { 'x-api-key': app.key, 'x-resendduration': '600', ...headers });
    clients.push(c);
    await c.next((m) => m.type === 'connected');
    return c;
  };
  const transactions = (c: TestWsClient, id: string) => c.received.filter((m: Json) => m.type === 'transaction' && m.id === id);
  const metric = async (name: string, labels: Record<string, string> = {}) =>
    parsePrometheusText(await (await fetch(`${opsBase}/metrics`)).text())
      .samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
      .reduce((n, s) => n + s.value, 0);

  before(async () => {
    db = createDb({ url: env.databaseUrl, poolMax: 2 });
    app.key = (await createAppWithKey(db, { id: app.id })).key;
    // Unacknowledged pushes are due again after 1 s.
    await db('tx.app_configs').insert({ app_id: app.id, ws_ack_resend_interval_seconds: 1 });
    pushTopic = prefix + TOPICS.txPush.name;
    await createRegistryTopics(prefix, [TOPICS.txPush, TOPICS.addressesChanges]);
    // Pings every 2 s: often enough for the dead-connection case, and a test process stalled for
    // half a second on a loaded machine (loading the producer, say) does not miss a pong.
    gateway = await startGateway(prefix, 2_000);
  });

  /** A tx-gateway process on the test's topics; `pingMs` is its WebSocket ping interval. */
  async function startGateway(prefix: string, pingMs: number): Promise<RunningProcess> {
    const [port, ops] = await Promise.all([freePort(), freePort()]);
    base = `http://127.0.0.1:${port}`;
    opsBase = `http://127.0.0.1:${ops}`;
    const proc = spawnTs('apps/tx-gateway/src/main.ts', {
      KAFKA_BROKERS: env.kafkaBrokers.join(','),
      KAFKA_TOPIC_PREFIX: prefix,
      DATABASE_URL: env.databaseUrl,
      REDIS_URL: env.redisUrl,
      REDIS_KEY_PREFIX: `${prefix}redis:`,
      PORT: String(port),
      OPS_PORT: String(ops),
      WEBHOOK_SECRET_KEY: randomBytes(32).toString('hex'),
      TX_GATEWAY_PUSH_GROUP: `${prefix}push`,
      WS_RESEND_SCAN_MS: '100',
      WS_RESEND_CONFIG_CACHE_MS: '0',
      WS_PING_INTERVAL_MS: String(pingMs),
      WS_MAX_BUFFERED_BYTES: String(64 * 1024),
      LOG_LEVEL: 'warn',
    });
    await waitReady(proc, ops, 60_000);
    return proc;
  }

  after(async () => {
    await Promise.all(clients.map((c) => c.close()));
    if (gateway) expect(await stopProcess(gateway), 'clean shutdown').to.equal(0);
    await db?.destroy();
  });

  it('sends an unacknowledged push again every ws_ack_resend_interval_seconds, and stops once it is acknowledged', async () => {
    const c = await open();
    const p = push(0);
    await publish(p);
    await c.next((m) => m.type === 'transaction' && m.id === p.message_id);
    // Sent again after the interval while the client stays connected.
    await waitFor(() => transactions(c, p.message_id).length >= 3, { timeoutMs: 15_000, what: 'two periodic resends' });
    c.send({ id: 'ack', type: 'transactionACK', data: { chain_type: 'ethereum', chain_id: 1, txHash: p.tx.tx_hash } });
    const afterAck = transactions(c, p.message_id).length;
    // A second push, acknowledged later: once it has been resent, the first had every chance to be too.
    const q = push(1);
    await publish(q);
    await waitFor(() => transactions(c, q.message_id).length >= 2, { timeoutMs: 15_000, what: 'the second push resent' });
    // At most one resend of the first can have crossed the ACK on the wire.
    expect(transactions(c, p.message_id).length - afterAck).to.be.at.most(1);
    const frames = transactions(c, p.message_id);
    expect(frames.every((f: Json) => JSON.stringify(f) === JSON.stringify(frames[0])), 'a resend is the same frame').to.equal(true);
    expect(await metric('chainpipe_ws_pushes_sent_total', { reason: 'periodic' })).to.be.at.least(3);
    c.send({ id: 'ack2', type: 'transactionACK', data: { chain_type: 'ethereum', chain_id: 1, txHash: q.tx.tx_hash } });
  });

  it('does not send a replayed push twice to a connection that had it', async () => {
    // Only this test's connection is open: the count below is of its duplicates alone.
    await Promise.all(clients.splice(0).map((old) => old.close()));
    await db('tx.app_configs').where({ app_id: app.id }).update({ ws_ack_resend_interval_seconds: 3600 });
    // The gateway reads the interval afresh on every scan (WS_RESEND_CONFIG_CACHE_MS 0): a fresh
    // push from now on is not resent during this test.
    const c = await open({ 'x-resendduration': '0' });
    const p = push(2);
    await publish(p);
    await c.next((m) => m.type === 'transaction' && m.id === p.message_id);
    // The same message again (tx.push.v1 replayed after a crash), then a new one behind it on the same key.
    const r = push(3);
    await publish(p, r);
    await c.next((m) => m.type === 'transaction' && m.id === r.message_id);
    expect(transactions(c, p.message_id)).to.have.length(1);
  });

  it('closes a connection that stops answering pings', async () => {
    const c = await open({ 'x-resendduration': '0' });
    const before = await metric('chainpipe_ws_disconnects_total', { reason: 'no_pong' });
    // The client stops reading its socket: no pong goes back (the server pings every 2 s).
    const closed = new Promise((r) => c.ws.once('close', r));
    (c.ws as unknown as { _socket: { pause(): void } })._socket.pause();
    await waitFor(async () => (await metric('chainpipe_ws_disconnects_total', { reason: 'no_pong' })) > before, { timeoutMs: 10_000, what: 'the dead connection closed by the server' });
    (c.ws as unknown as { _socket: { resume(): void } })._socket.resume();
    await closed;
  });

  it('cuts off a client that stopped reading once it is 64 KiB behind; another client of the application gets every push', async () => {
    // A gateway whose pings are far apart: a paused client must be cut off for its backlog, not
    // first for a missed pong (which takes a few seconds at the 2 s interval of the tests above).
    await Promise.all(clients.splice(0).map((old) => old.close()));
    expect(await stopProcess(gateway!), 'clean shutdown').to.equal(0);
    gateway = await startGateway(prefix, 120_000);
    const slow = await open({ 'x-resendduration': '0' });
    const fast = await open({ 'x-resendduration': '0' });
    const before = await metric('chainpipe_ws_disconnects_total', { reason: 'slow' });
    const closed = new Promise((r) => slow.ws.once('close', r));
    // The slow client reads nothing more: the kernel buffers fill, then the server's backlog.
    (slow.ws as unknown as { _socket: { pause(): void } })._socket.pause();
    const big = txs.reduce((a, b) => (JSON.stringify(b).length > JSON.stringify(a).length ? b : a));
    const burst = Array.from({ length: 3000 }, (_, i) => ({ ...push(i % txs.length), tx: { ...big, tx_hash: `0x${randomBytes(32).toString('hex')}` } }));
    for (let i = 0; i < burst.length; i += 500) await publish(...burst.slice(i, i + 500));
    const last = burst[burst.length - 1].message_id;
    await fast.next((m) => m.type === 'transaction' && m.id === last, 60_000);
    const ids = new Set(fast.received.filter((m: Json) => m.type === 'transaction').map((m: Json) => m.id));
    expect(burst.every((p) => ids.has(p.message_id)), 'the reading client got every push').to.equal(true);
    await waitFor(async () => (await metric('chainpipe_ws_disconnects_total', { reason: 'slow' })) > before, { timeoutMs: 10_000, what: 'the slow client cut off' });
    (slow.ws as unknown as { _socket: { resume(): void } })._socket.resume();
    await closed;
  });

  it('writes a reconnecting client its backlog, many times the 64 KiB bound, at the pace it reads, and the periodic resends of it too: the client is never cut off', async () => {
    await Promise.all(clients.splice(0).map((old) => old.close()));
    // An application of its own: the case above left 3,000 unacknowledged pushes on the first.
    const other = { id: `wsr-${randomBytes(4).toString('hex')}`, key: '' };
    other.key = (await createAppWithKey(db, { id: other.id })).key;
    await db('tx.app_configs').insert({ app_id: other.id, ws_ack_resend_interval_seconds: 2 });
    const big = txs.reduce((a, b) => (JSON.stringify(b).length > JSON.stringify(a).length ? b : a));
    const missed = Array.from({ length: 1500 }, (_, i) => ({ ...push(i % txs.length), app_id: other.id, tx: { ...big, tx_hash: `0x${randomBytes(32).toString('hex')}` } }));
    // Matched while the application had no connection open, and all stored before it connects:
    // one arriving after the handshake is a live push, which a client not reading yet may only
    // fall 64 KiB behind on.
    for (let i = 0; i < missed.length; i += 500) await publish(...missed.slice(i, i + 500));
    const redis = createRedis({ url: env.redisUrl, keyPrefix: `${prefix}redis:` });
    try {
      await waitFor(async () => (await redis.zcard(`ws:${other.id}:unacked`)) === missed.length, { timeoutMs: 30_000, what: 'every push stored for a resend' });
    } finally {
      redis.disconnect();
    }
    const before = await metric('chainpipe_ws_disconnects_total', { reason: 'slow' });
    const c = await connectWs(`${base.replace('http', 'ws')}/tx/api/v1/transaction/ws`, { 'x-api-key': other.key, 'x-resendduration': '600' });
    clients.push(c);
    // The client takes a second before it reads (a reconnecting client still setting up).
    const socket = (c.ws as unknown as { _socket: { pause(): void; resume(): void } })._socket;
    socket.pause();
    await new Promise((r) => setTimeout(r, 1_000));
    socket.resume();
    const count = (id: string) => c.received.filter((m: Json) => m.type === 'transaction' && m.id === id).length;
    await waitFor(() => missed.every((p) => count(p.message_id) >= 1), { timeoutMs: 60_000, what: () => `the backlog (${missed.filter((p) => count(p.message_id) >= 1).length} of ${missed.length})` });
    const bytes = c.received.filter((m: Json) => m.type === 'transaction').reduce((n: number, m: Json) => n + JSON.stringify(m).length, 0);
    expect(bytes, 'the backlog is many times the bound').to.be.greaterThan(10 * 64 * 1024);
    // Never acknowledged: every 2 s the whole backlog is due again.
    await waitFor(() => missed.every((p) => count(p.message_id) >= 2), { timeoutMs: 60_000, what: () => `a periodic resend of the backlog (${missed.filter((p) => count(p.message_id) >= 2).length} of ${missed.length})` });
    expect(c.ws.readyState, 'the client is still connected').to.equal(c.ws.OPEN);
    expect(await metric('chainpipe_ws_disconnects_total', { reason: 'slow' })).to.equal(before);
    await db('tx.app_configs').where({ app_id: other.id }).update({ ws_ack_resend_interval_seconds: 3600 });
  });
});
