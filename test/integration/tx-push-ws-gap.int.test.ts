import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { networkByName } from '@chainpipe/chains';
import { TOPICS, type TxPushMessage } from '@chainpipe/contracts';
import { createDb, type Knex } from '@chainpipe/db';
import { createRedis, type Redis } from '@chainpipe/redis';
import { connectWs, createAppWithKey, parsePrometheusText, createRegistryTopics, evmBlockItem, produceJson, startTxGateway, stopProcess, testEnv, topicMessage, uniquePrefix, waitFor, type TestTxGateway, type TestWsClient } from '@chainpipe/testing';
import { parseEvmPayload } from '@chainpipe/tx-parsers';

type Json = any;

/**
 * A gateway copy that falls behind the capped fan-out stream (stopped with SIGSTOP, as a copy
 * starved of CPU or paused by its host, while the other copy stores and announces 300 pushes
 * into a stream capped at about 10 entries): its clients are not left with a silent gap. A
 * connection with a resend window gets what it missed from the resend store; one without a
 * window is closed with 1013 so it reconnects; what a connection unsubscribed from is never
 * sent again, neither by the recovery nor by the periodic resend.
 */
describe('WebSocket push: a gateway copy that fell behind the fan-out stream (two tx-gateway processes)', function () {
  this.timeout(150_000);
  const env = testEnv();
  const network = networkByName('ethereum-mainnet')!;
  const ctx = { chainType: network.chainType, chainId: network.chainId, family: network.family, nativeSymbol: network.nativeSymbol, nativeDecimals: network.nativeDecimals };
  const txs = parseEvmPayload([evmBlockItem()], ctx).blocks[0].transactions.filter((t) => t.sender);
  const prefix = uniquePrefix('wsgap');
  const app = { id: `wsgap-${randomBytes(4).toString('hex')}`, key: '' };
  // Two monitored senders: pushes alternate between them.
  const [addrX, addrY] = [...new Set(txs.map((t) => t.sender!))].slice(0, 2);
  const clients: TestWsClient[] = [];
  let db: Knex;
  let redis: Redis;
  let steady: TestTxGateway;
  let stalled: TestTxGateway;

  const push = (i: number): TxPushMessage => {
    const address = i % 2 === 0 ? addrX : addrY;
    const tx = { ...txs[i % txs.length], sender: address, tx_hash: `0x${randomBytes(32).toString('hex')}` };
    return topicMessage(TOPICS.txPush, { message_id: randomBytes(16).toString('hex'), app_id: app.id, tx_id: String(3_000_000 + i), network: 'ethereum-mainnet', listen_address: [address], is_reorg_resend: false, orphaned: false, ws: true, webhook: false, matched_at: Date.now(), tx });
  };
  const publish = (pushes: TxPushMessage[]) => produceJson(prefix + TOPICS.txPush.name, pushes.map((p) => ({ key: p.app_id, value: p })));
  const open = async (gw: TestTxGateway, resendSeconds: number) => {
    const c = await connectWs(gw.wsUrl, { 'x-api-key': app.key, 'x-resendduration': String(resendSeconds) });
    clients.push(c);
    await c.next((m) => m.type === 'connected');
    return c;
  };
  const ids = (c: TestWsClient) => new Set(c.received.filter((m: Json) => m.type === 'transaction').map((m: Json) => m.id as string));
  const has = (c: TestWsClient, pushes: TxPushMessage[]) => pushes.every((p) => ids(c).has(p.message_id));
  const entryField = (flat: string[], name: string) => flat[flat.indexOf(name) + 1];

  before(async () => {
    db = createDb({ url: env.databaseUrl, poolMax: 2 });
    app.key = (await createAppWithKey(db, { id: app.id })).key;
    // Unacknowledged pushes are due again after 1 s: the periodic resend runs all through the test.
    await db('tx.app_configs').insert({ app_id: app.id, ws_ack_resend_interval_seconds: 1 });
    await createRegistryTopics(prefix, [TOPICS.txPush, TOPICS.addressesChanges]);
    redis = createRedis({ url: env.redisUrl, keyPrefix: `${prefix}redis:` });
    const gatewayEnv = { WS_FANOUT_MAX_ENTRIES: '10', TX_GATEWAY_SESSION_TIMEOUT_MS: '6000', WS_RESEND_SCAN_MS: '200', WS_RESEND_CONFIG_CACHE_MS: '0' };
    // Two copies starting at once on a loaded machine: more than the usual minute to get ready.
    [steady, stalled] = await Promise.all([startTxGateway(prefix, gatewayEnv, { readyTimeoutMs: 120_000 }), startTxGateway(prefix, gatewayEnv, { readyTimeoutMs: 120_000 })]);
  });

  after(async () => {
    await Promise.all(clients.map((c) => c.close()));
    if (stalled?.proc.proc.exitCode === null) process.kill(stalled.proc.proc.pid!, 'SIGCONT');
    const codes = [];
    for (const gw of [steady, stalled]) if (gw) codes.push(await stopProcess(gw.proc));
    redis?.disconnect();
    await db?.destroy();
    expect(codes.filter((c) => c !== 0), 'clean shutdowns').to.deep.equal([]);
  });

  it('recovers what the copy missed from the resend store, closes a window-less connection with 1013, and honours unsubscribe', async () => {
    const control = await open(steady, 600);
    const whole = await open(stalled, 600);
    const windowless = await open(stalled, 0);
    const narrowed = await open(stalled, 600);
    const closeCode = new Promise<number>((resolve) => windowless.ws.once('close', (code) => resolve(code)));

    // Before the stall: every client has the first pushes live; then `narrowed` drops address X.
    const first = Array.from({ length: 4 }, (_, i) => push(i));
    await publish(first);
    for (const c of [control, whole, windowless, narrowed]) await waitFor(() => has(c, first), { timeoutMs: 30_000, what: 'the first pushes live on every client' });
    narrowed.send({ id: 'u1', type: 'unsubscribe', data: { chain_type: 'ethereum', address: addrX } });
    await narrowed.next((m) => m.type === 'unsubscribe' && m.code === 0);
    const xBefore = narrowed.received.filter((m: Json) => m.type === 'transaction' && first.some((p) => p.message_id === m.id && p.listen_address[0] === addrX)).length;
    const seqAtStall = Number(entryField((await redis.xrevrange('ws:fanout', '+', '-', 'COUNT', 1))[0][1], 'seq'));

    // The stall: 300 pushes go through the other copy while this one reads nothing.
    process.kill(stalled.proc.proc.pid!, 'SIGSTOP');
    const during = Array.from({ length: 300 }, (_, i) => push(100 + i));
    await publish(during);
    await waitFor(() => has(control, during), { timeoutMs: 60_000, what: () => `the steady copy's client has every push (${during.filter((p) => !ids(control).has(p.message_id)).length} missing)` });
    // The stream no longer holds the entries after the last one the stalled copy saw.
    const oldest = (await redis.xrange('ws:fanout', '-', '+', 'COUNT', 1))[0][1];
    expect(Number(entryField(oldest, 'seq')), 'the stream was trimmed past the stalled copy').to.be.greaterThan(seqAtStall + 1);
    process.kill(stalled.proc.proc.pid!, 'SIGCONT');

    const all = [...first, ...during];
    await waitFor(() => has(whole, all), { timeoutMs: 60_000, what: () => `every push on the stalled copy's client (${all.filter((p) => !ids(whole).has(p.message_id)).length} missing)` });
    expect(await closeCode, 'the connection without a resend window is closed: try again later').to.equal(1013);
    const wantedByNarrowed = all.filter((p, i) => i < first.length || p.listen_address[0] === addrY);
    await waitFor(() => has(narrowed, wantedByNarrowed), { timeoutMs: 60_000, what: 'every push of address Y on the narrowed connection' });
    // Two more rounds of the periodic resend (1 s) pass: still no push of X after the unsubscribe.
    await new Promise((r) => setTimeout(r, 2_500));
    const xPushes = new Set(all.filter((p) => p.listen_address[0] === addrX).map((p) => p.message_id));
    const xAfter = narrowed.received.filter((m: Json) => m.type === 'transaction' && xPushes.has(m.id)).length;
    expect(xAfter, 'no push of an unsubscribed address: not recovered, not resent').to.equal(xBefore);
    const gaps = parsePrometheusText(await (await fetch(`${stalled.opsUrl}/metrics`)).text()).samples.filter((s) => s.name === 'chainpipe_ws_fanout_gaps_total');
    expect(gaps.reduce((n, s) => n + s.value, 0), 'the stalled copy counted the gap').to.be.at.least(1);
  });
});
