import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Registry } from 'prom-client';
import { WebSocketServer } from 'ws';
import { networkByName } from '@chainpipe/chains';
import type { ChainTxMessage, TxPushMessage } from '@chainpipe/contracts';
import { ApiKeyRepository, createDb, ensureDatabase, migrateLatest } from '@chainpipe/db';
import { createRedis } from '@chainpipe/redis';
import { SecretBox, createLogger } from '@chainpipe/runtime';
import { parseEvmPayload } from '@chainpipe/tx-parsers';
import { toTransactionResult } from '@chainpipe/tx-records';
import { WebhookDispatcher, postWebhook, webhookHeaders } from '@chainpipe/webhooks';
import { AddressIndex } from '../apps/tx-matcher/src/address-index';
import { matchRecords } from '../apps/tx-matcher/src/plan';
import { transactionFrame } from '../apps/tx-gateway/src/push/push.handler';
import { ResendStore } from '../apps/tx-gateway/src/push/resend-store';
import { WsHub } from '../apps/tx-gateway/src/push/ws-hub';
import { evmBlockItem } from '@chainpipe/testing';
import { machine, printTable } from './lib-stats';
import { WsFleet } from './lib-ws-fleet';

/**
 * The delivery hot paths, each next to a raw baseline in the same run:
 * 1. tx-matcher's match step with 1,000,000 monitored addresses next to 100 (throughput ratio,
 *    memory per indexed address);
 * 2. tx-gateway's WebSocket hub pushing one application's transactions to 1,000 and 10,000
 *    connections (clients in child processes) next to a raw `ws` broadcast of the same frames;
 * 3. webhook-dispatcher's live path (app config under a row lock, sign, POST, one transaction per
 *    application) to a local receiver next to a raw keep-alive POST loop of the same bodies.
 * Not measured here: the end-to-end latency from /stream to a push (it crosses four processes).
 */

const FANOUT = (process.env.BENCH_DELIVERY_FANOUT ?? '1000,10000').split(',').map(Number);
const WEBHOOKS = Number(process.env.BENCH_DELIVERY_WEBHOOKS ?? 2_000);
const silent = createLogger({ name: 'bench-delivery', level: 'warn' });
const address = () => `0x${randomBytes(20).toString('hex')}`;

function records(): ChainTxMessage[] {
  const n = networkByName('ethereum-mainnet')!;
  const txs = parseEvmPayload([evmBlockItem()], { chainType: n.chainType, chainId: n.chainId, family: n.family, nativeSymbol: n.nativeSymbol, nativeDecimals: n.nativeDecimals }).blocks[0].transactions;
  return txs.map((tx, i) => ({ id: String(i + 1), network: n.network, is_reorg_resend: false, orphaned: false, tx }));
}

function matcher(): { rows: Record<string, string | number>[]; ratios: string[] } {
  const recs = records();
  const parties = [...new Set(recs.flatMap((r) => [r.tx.sender, r.tx.receiver].filter((a): a is string => Boolean(a))))];
  const rows: Record<string, string | number>[] = [];
  const rates: number[] = [];
  for (const size of [100, 1_000_000]) {
    global.gc?.();
    const heap0 = process.memoryUsage().heapUsed;
    const index = new AddressIndex();
    // Every tenth party of the block is monitored, so each batch has matches; the rest is noise.
    parties.forEach((a, i) => i % 10 === 0 && index.add(`app-${i % 7}`, 'ethereum', a));
    for (let i = index.size; i < size; i++) index.add(`app-${i % 1000}`, 'ethereum', address());
    global.gc?.();
    const bytesPer = (process.memoryUsage().heapUsed - heap0) / size;
    let matched = 0;
    const t0 = process.hrtime.bigint();
    const rounds = 400;
    for (let r = 0; r < rounds; r++) matched += matchRecords(index, recs).length;
    const s = Number(process.hrtime.bigint() - t0) / 1e9;
    const rate = (rounds * recs.length) / s;
    rates.push(rate);
    rows.push({ 'monitored addresses': size, 'records/s': Math.round(rate), matches: matched, 'bytes per address': size >= 10_000 ? Math.round(bytesPer) : '— (too small to measure)' });
  }
  return { rows, ratios: [`matcher with 1,000,000 addresses: ${(rates[1] / rates[0]).toFixed(2)}x the records/s with 100`] };
}

export async function run(): Promise<void> {
  console.log(`machine: ${machine()}`);
  const m = matcher();
  printTable(m.rows);
  const ratios = [...m.ratios];

  // 2. WebSocket fan-out through the hub.
  const redis = createRedis({ url: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379/0', keyPrefix: `bench-delivery-${randomBytes(3).toString('hex')}:` });
  const appId = `bench-${randomBytes(3).toString('hex')}`;
  const hub = new WsHub(
    {
      // Every handshake is the bench application's: the key check is not what is measured here.
      resolveKey: async () => ({ appId, keyId: 'bench' }),
      store: new ResendStore(redis, { retentionSeconds: 600 }),
      resendIntervalSeconds: async () => 3600,
      lookupTx: async () => undefined,
      logger: silent,
      registry: new Registry(),
      now: Date.now,
    },
    { maxConnectionsPerKey: 100_000, maxBufferedBytes: 64 * 1024 * 1024, pingIntervalMs: 600_000, defaultResendSeconds: 0, retentionSeconds: 600, maxMessageBytes: 65_536, resendScanMs: 600_000 },
  );
  const server = http.createServer();
  server.listen(0, '127.0.0.1', 4096);
  await new Promise((r) => server.once('listening', r));
  hub.attach(server);
  const url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/tx/api/v1/transaction/ws`;
  const recs = records().slice(0, 20);
  const pushes: TxPushMessage[] = recs.map((r, i) => ({ message_id: `m${i}-${randomBytes(4).toString('hex')}`, app_id: appId, tx_id: r.id, network: r.network, listen_address: [r.tx.sender!], is_reorg_resend: false, orphaned: false, ws: true, webhook: false, matched_at: Date.now(), tx: r.tx }));
  const frames = pushes.map(transactionFrame);
  const fanRows: Record<string, string | number>[] = [];
  for (const n of FANOUT) {
    global.gc?.();
    const mem0 = process.memoryUsage().heapUsed;
    // `connected` is the first message of each connection: counted before the pushes start.
    const hubClients = await WsFleet.connect({ url, headers: { 'x-api-key': 'bench', 'x-resendduration': '0' }, count: n });
    global.gc?.();
    const memPer = (process.memoryUsage().heapUsed - mem0) / n;
    const hubMs = await hubClients.timeDelivery(frames.length, () => {
      pushes.forEach((p, i) => hub.deliver(appId, frames[i], p.tx.chain_type, p.listen_address, p.message_id));
    });
    await hubClients.close();
    const wss = new WebSocketServer({ port: 0, host: '127.0.0.1', perMessageDeflate: false, backlog: 4096 });
    await new Promise((r) => wss.once('listening', r));
    const rawClients = await WsFleet.connect({ url: `ws://127.0.0.1:${(wss.address() as AddressInfo).port}`, count: n });
    const rawMs = await rawClients.timeDelivery(frames.length, () => {
      for (const f of frames) for (const c of wss.clients) c.send(f);
    });
    await rawClients.close();
    await new Promise((r) => wss.close(() => r(undefined)));
    fanRows.push({ connections: n, pushes: frames.length, 'hub ms': +hubMs.toFixed(1), 'raw ws ms': +rawMs.toFixed(1), 'hub frames/s': Math.round(((n * frames.length) / hubMs) * 1000), 'server heap KiB per connection': +(memPer / 1024).toFixed(1) });
    ratios.push(`ws fan-out to ${n}: hub ${(hubMs / rawMs).toFixed(2)}x the raw ws broadcast time`);
  }
  printTable(fanRows);
  await hub.close();
  server.close();

  // 3. Webhook deliveries to a local receiver.
  const url3 = process.env.BENCH_DELIVERY_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/chainpipe_bench';
  await ensureDatabase(url3);
  const db = createDb({ url: url3, poolMax: 4, applicationName: 'bench-delivery' });
  await migrateLatest(db);
  const box = new SecretBox(randomBytes(32).toString('hex'));
  let got = 0;
  const receiver = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      got++;
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
  const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  const whApp = `bench-wh-${randomBytes(3).toString('hex')}`;
  await new ApiKeyRepository(db).createApp(whApp, whApp);
  await db('tx.app_configs').insert({ app_id: whApp, enable_webhook: true, webhook_url: hookUrl, webhook_secret_enc: box.seal('bench secret') });
  const all = records();
  const whPushes: TxPushMessage[] = Array.from({ length: WEBHOOKS }, (_, i) => {
    const r = all[i % all.length];
    return { message_id: `w${i}-${randomBytes(4).toString('hex')}`, app_id: whApp, tx_id: String(i), network: r.network, listen_address: [r.tx.sender!], is_reorg_resend: false, orphaned: false, ws: false, webhook: true, matched_at: Date.now(), tx: r.tx };
  });
  const dispatcher = new WebhookDispatcher({
    db,
    send: (u, body, headers) => postWebhook(u, body, headers, { allowPrivate: true, connectTimeoutMs: 5_000, responseTimeoutMs: 10_000, maxResponseBytes: 65_536 }),
    openSecret: (s) => box.open(s),
    now: Date.now,
    logger: silent,
    registry: new Registry(),
  });
  // As the consumer hands them over: chunks of 200 records per handler call.
  let t0 = process.hrtime.bigint();
  for (let i = 0; i < whPushes.length; i += 200) await dispatcher.handlePushes(whPushes.slice(i, i + 200));
  const dispatcherS = Number(process.hrtime.bigint() - t0) / 1e9;
  const delivered = got;
  got = 0;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const post = (body: string, headers: Record<string, string>) =>
    new Promise<void>((resolve, reject) => {
      const req = http.request(hookUrl, { method: 'POST', agent, headers: { 'content-type': 'application/json', ...headers } }, (res) => {
        res.resume();
        res.on('end', () => resolve());
      });
      req.on('error', reject);
      req.end(body);
    });
  t0 = process.hrtime.bigint();
  for (const p of whPushes) {
    const body = JSON.stringify([toTransactionResult(p.tx)]);
    await post(body, webhookHeaders(p.message_id, Math.floor(Date.now() / 1000), body, 'bench secret'));
  }
  const rawS = Number(process.hrtime.bigint() - t0) / 1e9;
  agent.destroy();
  printTable([
    { path: 'webhook-dispatcher live path (row lock, sign, POST)', posts: delivered, 'posts/s': Math.round(delivered / dispatcherS) },
    { path: 'raw keep-alive POST loop, same bodies and headers', posts: got, 'posts/s': Math.round(got / rawS) },
  ]);
  ratios.push(`webhooks: dispatcher ${((delivered / dispatcherS) / (got / rawS)).toFixed(2)}x the raw keep-alive POST loop`);
  console.log(ratios.map((r) => `  ${r}`).join('\n'));
  receiver.close();
  await db('tx.app_configs').where({ app_id: whApp }).del();
  await db('core.apps').where({ app_id: whApp }).del();
  await db.destroy();
  redis.disconnect();
}
