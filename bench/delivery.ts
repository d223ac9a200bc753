import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Registry } from 'prom-client';
import { WebSocketServer } from 'ws';
import { networkByName } from '@chainpipe/chains';
import type { ChainTxMessage, TxPushMessage } from '@chainpipe/contracts';
import { ApiKeyRepository, createDb, ensureDatabase, migrateLatest } from '@chainpipe/db';
import { createRedis } from '@chainpipe/redis';
import { SecretBox, createLogger, systemClock } from '@chainpipe/runtime';
import { parseEvmPayload } from '@chainpipe/tx-parsers';
import { toTransactionResult } from '@chainpipe/tx-records';
import { SENDER_DEFAULTS, batchId, createWebhookDispatcher, webhookHeaders } from '@chainpipe/webhooks';
import { AddressIndex, matchRecords } from '@chainpipe/tx-matcher';
import { ConnectionCap, ResendStore, WsHub, transactionFrame } from '@chainpipe/tx-gateway';
import { TOPICS } from '@chainpipe/contracts';
import { generateApiKey, routeUpgrades } from '@chainpipe/http';
import { connectWs, createRegistryTopics, evmBlockItem, freePort, readTopic, rebaseBlock, randomSuffix, spawnTs, stopProcess, streamerBody, waitFor, waitReady, type RunningProcess } from '@chainpipe/testing';
import { Kafka, logLevel } from 'kafkajs';
import { cpuSince, histogramMeans, latencyStats, machine, median, printTable } from './lib-stats';
import { WsFleet } from './lib-ws-fleet';
import { webhookDispatcherConfig } from '@chainpipe/webhook-dispatcher';

/**
 * The delivery hot paths, each next to a raw baseline in the same run:
 * 1. tx-matcher's match step with 1,000,000 monitored addresses next to 100 (throughput ratio,
 *    memory per indexed address);
 * 2. tx-gateway's WebSocket hub pushing one application's transactions to 1,000 and 10,000
 *    connections (clients in child processes) next to a raw `ws` broadcast of the same frames;
 * 3. webhook-dispatcher's live path (lease, sign, POST, record) to a local receiver next to raw
 *    keep-alive POST loops of the same bodies (`webhookLivePath`).
 * 3b. one tenant beside another (`webhookTenants`): an application's webhook latency through the
 *    live path alone and beside an application whose receiver answers 200 after 8 s, next to a
 *    raw keep-alive POST to the same receiver.
 * 4. the latency from `POST /stream` of a real block to the WebSocket push and to the webhook
 *    receipt of a monitored address's transaction, through chain-ingest, chain-parser, tx-matcher,
 *    tx-gateway and webhook-dispatcher running as processes, at a steady rate, next to one raw
 *    kafkajs produce → consume hop in the same run. The processes run compiled, as deployed,
 *    with `CHAINPIPE_BUILT=1` after `npm run build` (the test kit's `spawnTs`); from source under
 *    tsx otherwise.
 */

const FANOUT = (process.env.BENCH_DELIVERY_FANOUT ?? '1000,10000').split(',').map(Number);
/** Pushes per round of each webhook case: 10,000 (100 POSTs of one application) keep a round past the timer noise of a few ms. */
const WEBHOOKS = Number(process.env.BENCH_DELIVERY_WEBHOOKS ?? 10_000);
/** Applications of the many-applications webhook case: each consumer batch has one push per application. */
const WEBHOOK_APPS = Number(process.env.BENCH_DELIVERY_WEBHOOK_APPS ?? 1_000);
/** Pushes per handler call: what webhook-dispatcher's consumer hands over at most as deployed (its configuration's default). */
const WEBHOOK_CALL = Number(process.env.BENCH_DELIVERY_WEBHOOK_CALL ?? deployedCallSize());

function deployedCallSize(): number {
  const parsed = webhookDispatcherConfig.WEBHOOK_MAX_RECORDS_PER_CALL.parse(undefined);
  if (!('value' in parsed)) throw new Error('WEBHOOK_MAX_RECORDS_PER_CALL has no default');
  return parsed.value;
}
/** Alternating rounds of the webhook cases (dispatcher, then raw). */
const WEBHOOK_ROUNDS = Number(process.env.BENCH_DELIVERY_WEBHOOK_ROUNDS ?? 9);
/** Which parts run (all by default): matcher, fanout, webhooks, tenants, latency. */
const PARTS = new Set((process.env.BENCH_DELIVERY_PARTS ?? 'matcher,fanout,webhooks,tenants,latency').split(','));
/** How late the slow tenant's receiver answers (200) in the tenants case. */
const SLOW_RECEIVER_MS = Number(process.env.BENCH_DELIVERY_SLOW_RECEIVER_MS ?? 8_000);
/** Blocks posted for the latency (2 a second): with 120 the p99 is the second-highest sample, not the maximum as with 40. */
const LATENCY_POSTS = Number(process.env.BENCH_DELIVERY_POSTS ?? 120);
/**
 * Posts sent first at the same rate and not measured, on both paths: the first blocks after the
 * apps' start pay one-time costs (code not yet optimized, first statements, heaps growing) that
 * are no part of the steady state; with one warm-up post the first measured one was still the
 * slowest of its run in two runs of three (the parser's publish 45 ms, the whole 127–206 ms).
 */
const WARMUP_POSTS = Number(process.env.BENCH_DELIVERY_WARMUP_POSTS ?? 5);
const BROKERS = (process.env.BENCH_KAFKA_BROKERS ?? process.env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(',');
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
  const ratios: string[] = [];
  if (PARTS.has('matcher')) {
    const m = matcher();
    printTable(m.rows);
    ratios.push(...m.ratios);
  }

  // 2. WebSocket fan-out through the hub.
  const redis = createRedis({ url: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379/0', keyPrefix: `bench-delivery-${randomBytes(3).toString('hex')}:` });
  const appId = `bench-${randomBytes(3).toString('hex')}`;
  const hub = new WsHub(
    {
      // Every handshake is the bench application's: the key check is not what is measured here.
      resolveKey: async () => ({ appId, keyId: 'bench' }),
      store: new ResendStore(redis, { retentionSeconds: 600 }),
      cap: new ConnectionCap(redis, { maxPerKey: 100_000, leaseMs: 600_000 }, systemClock),
      resendIntervalSeconds: async () => 3600,
      lookupTx: async () => undefined,
      logger: silent,
      registry: new Registry(),
    },
    { maxConnectionsPerKey: 100_000, maxBufferedBytes: 64 * 1024 * 1024, pingIntervalMs: 600_000, defaultResendSeconds: 0, retentionSeconds: 600, maxMessageBytes: 65_536 },
  );
  const server = http.createServer();
  server.listen(0, '127.0.0.1', 4096);
  await new Promise((r) => server.once('listening', r));
  routeUpgrades(server, [hub.upgrade]);
  const url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/tx/api/v1/transaction/ws`;
  const recs = records().slice(0, 20);
  const pushes: TxPushMessage[] = recs.map((r, i) => ({ message_id: `m${i}-${randomBytes(4).toString('hex')}`, app_id: appId, tx_id: r.id, network: r.network, listen_address: [r.tx.sender!], is_reorg_resend: false, orphaned: false, ws: true, webhook: false, matched_at: Date.now(), tx: r.tx }));
  const frames = pushes.map(transactionFrame);
  const fanRows: Record<string, string | number>[] = [];
  for (const n of PARTS.has('fanout') ? FANOUT : []) {
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
  if (fanRows.length) printTable(fanRows);
  await hub.close();
  server.close();

  // 3. Webhook deliveries to a local receiver.
  const url3 = process.env.BENCH_DELIVERY_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/chainpipe_bench';
  await ensureDatabase(url3);
  const db = createDb({ url: url3, poolMax: 4, applicationName: 'bench-delivery' });
  await migrateLatest(db);
  if (PARTS.has('webhooks')) {
    const wh = await webhookLivePath(db);
    printTable(wh.rows);
    ratios.push(...wh.ratios);
  }

  if (PARTS.has('tenants')) {
    const t = await webhookTenants(db);
    printTable(t.rows);
    ratios.push(...t.ratios);
  }

  // 4. /stream → push and webhook latency, through every process of the pipeline.
  if (PARTS.has('latency')) {
    const lat = await pipelineLatency(url3, db);
    printTable(lat.rows);
    ratios.push(...lat.ratios);
  }
  console.log(ratios.map((r) => `  ${r}`).join('\n'));
  await db.destroy();
  redis.disconnect();
}

/**
 * BENCH_DELIVERY_PARSER_NODE_OPTIONS: node flags of the chain-parser process only (a heap
 * setting, `--trace-gc` to see its collections next to the stage latencies).
 */
function parserNodeOptions(): Record<string, string> {
  const flags = process.env.BENCH_DELIVERY_PARSER_NODE_OPTIONS;
  return flags ? { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} ${flags}`.trim() } : {};
}

async function pipelineLatency(databaseUrl: string, db: ReturnType<typeof createDb>): Promise<{ rows: Record<string, string | number>[]; ratios: string[] }> {
  const prefix = `bench-dl-${randomBytes(3).toString('hex')}.`;
  process.env.TEST_KAFKA_BROKERS = BROKERS.join(',');
  await createRegistryTopics(prefix, [TOPICS.chainRaw, TOPICS.chainFetched, TOPICS.chainTx, TOPICS.addressesChanges, TOPICS.txPush]);
  const secret = randomBytes(12).toString('hex');
  const secretKey = randomBytes(32).toString('hex');
  const appId = `bench-lat-${randomBytes(3).toString('hex')}`;
  const keys = new ApiKeyRepository(db);
  await keys.createApp(appId, appId);
  const key = generateApiKey();
  await keys.addKey(appId, key.keyId, key.secretHash, null);
  // One plain ETH transfer of the fixture block: its receiver is the monitored address.
  const raw = evmBlockItem();
  const ok = new Set(raw.receipts.filter((r: { status: string }) => r.status === '0x1').map((r: { transactionHash: string }) => r.transactionHash));
  const target = raw.block.transactions.find((t: { value: string; input: string; hash: string }) => BigInt(t.value) > 0n && t.input === '0x' && ok.has(t.hash));
  const watched = String(target.to).toLowerCase();
  const hookAt = new Map<string, number>();
  const receiver = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const now = Date.now();
      for (const t of JSON.parse(body) as { txHash: string }[]) if (!hookAt.has(t.txHash)) hookAt.set(t.txHash, now);
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
  await db('tx.app_configs').insert({ app_id: appId, enable_webhook: true, webhook_url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`, webhook_secret_enc: new SecretBox(secretKey).seal('bench') });
  await db('tx.monitored_addresses').insert({ app_id: appId, chain_type: 'ethereum', address: watched });
  const common = { KAFKA_BROKERS: BROKERS.join(','), KAFKA_TOPIC_PREFIX: prefix, DATABASE_URL: databaseUrl, REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379/0', REDIS_KEY_PREFIX: `${prefix}redis:`, LOG_LEVEL: 'warn' };
  const [ingestPort, ingestOps, parserOps, matcherOps, gwPort, gwOps, dispatcherOps] = await Promise.all(Array.from({ length: 7 }, () => freePort()));
  const started: [RunningProcess, number][] = [
    [spawnTs('apps/chain-ingest/src/main.ts', { ...common, STREAM_SECRET: secret, PORT: String(ingestPort), OPS_PORT: String(ingestOps) }), ingestOps],
    [spawnTs('apps/chain-parser/src/main.ts', { ...common, OPS_PORT: String(parserOps), CHAIN_PARSER_GROUP: `${prefix}parser`, ...parserNodeOptions() }), parserOps],
    [spawnTs('apps/tx-matcher/src/main.ts', { ...common, OPS_PORT: String(matcherOps), TX_MATCHER_GROUP: `${prefix}matcher` }), matcherOps],
    [spawnTs('apps/tx-gateway/src/main.ts', { ...common, PORT: String(gwPort), OPS_PORT: String(gwOps), WEBHOOK_SECRET_KEY: secretKey, TX_GATEWAY_PUSH_GROUP: `${prefix}push` }), gwOps],
    [spawnTs('apps/webhook-dispatcher/src/main.ts', { ...common, OPS_PORT: String(dispatcherOps), WEBHOOK_DISPATCHER_GROUP: `${prefix}dispatcher`, WEBHOOK_SECRET_KEY: secretKey, ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true' }), dispatcherOps],
  ];
  try {
    await Promise.all(started.map(([p, ops]) => waitReady(p, ops, 150_000)));
    const ws = await connectWs(`ws://127.0.0.1:${gwPort}/tx/api/v1/transaction/ws`, { 'x-api-key': key.token, 'x-resendduration': '0' });
    await ws.next((m) => m.type === 'connected');
    const wsAt = new Map<string, number>();
    ws.ws.on('message', (d) => {
      const m = JSON.parse(d.toString()) as { type: string; data?: { txhash?: string } };
      if (m.type === 'transaction' && m.data?.txhash && !wsAt.has(m.data.txhash)) wsAt.set(m.data.txhash, Date.now());
    });
    const sentAt = new Map<string, number>();
    const post = async (i: number) => {
      // Twelve characters of new hash: with six, a block of an earlier run kept in the bench's
      // database came back now and then (15^6 suffixes, ~125 blocks a run), and its transactions,
      // already stored and pushed, were rightly not pushed again, so the run waited for them.
      const r = rebaseBlock('evm', raw, 3_000_000_000 + Math.floor(Math.random() * 1e9), randomSuffix() + randomSuffix());
      const hash = r.item.block.transactions.find((t: { to?: string; value: string; input: string }) => String(t.to).toLowerCase() === watched && BigInt(t.value) > 0n && t.input === '0x').hash as string;
      const body = streamerBody([r.item], { network: 'ethereum-mainnet', dataset: 'block_with_receipts', start: r.height });
      const t0 = Date.now();
      const res = await fetch(`http://127.0.0.1:${ingestPort}/stream`, { method: 'POST', headers: { 'content-secret-x': secret, 'cl-stream-network': 'ethereum-mainnet', 'content-type': 'application/octet-stream' }, body });
      if (res.status !== 200) throw new Error(`post ${i}: ${res.status}`);
      if (i >= 0) sentAt.set(hash, t0);
      return hash;
    };
    // Warm-up (first joins, first connections), then a steady 2 blocks a second.
    const warm: string[] = [];
    for (let i = 0; i < WARMUP_POSTS; i++) {
      warm.push(await post(-1));
      await new Promise((r) => setTimeout(r, 500));
    }
    await waitFor(() => warm.every((h) => hookAt.has(h) && wsAt.has(h)), { timeoutMs: 120_000, what: 'the warm-up blocks pushed' });
    for (let i = 0; i < LATENCY_POSTS; i++) {
      await post(i);
      await new Promise((r) => setTimeout(r, 500));
    }
    await waitFor(() => [...sentAt.keys()].every((h) => wsAt.has(h) && hookAt.has(h)), { timeoutMs: 120_000, what: 'every block pushed and delivered' });
    await ws.close();
    const wsLat = [...sentAt].map(([h, t]) => wsAt.get(h)! - t);
    const hookLat = [...sentAt].map(([h, t]) => hookAt.get(h)! - t);
    const { stages, slowest } = await stageLatencies(prefix, sentAt, wsAt, hookAt);
    // Inside the two busiest stages: the apps' own duration histograms (means over the run).
    const inside = [
      ...(await histogramMeans(parserOps, 'chain-parser', ['chainpipe_parser_parse_duration_seconds', 'chainpipe_parser_store_duration_seconds', 'chainpipe_consumer_batch_duration_seconds'])),
      ...(await histogramMeans(matcherOps, 'tx-matcher', ['chainpipe_matcher_match_seconds', 'chainpipe_consumer_batch_duration_seconds'])),
    ];
    const rawLat = await rawKafkaLatency(prefix);
    const [a, b, c] = [latencyStats(wsLat), latencyStats(hookLat), latencyStats(rawLat)];
    const stageRow = (path: string, xs: number[]) => {
      const st = latencyStats(xs);
      return { path: `  stage: ${path}`, samples: st.count, 'p50 ms': +st.p50.toFixed(1), 'p99 ms': +st.p99.toFixed(1) };
    };
    return {
      rows: [
        { path: 'POST /stream → WebSocket push (5 processes)', samples: a.count, 'p50 ms': +a.p50.toFixed(1), 'p99 ms': +a.p99.toFixed(1) },
        { path: 'POST /stream → webhook receipt (5 processes)', samples: b.count, 'p50 ms': +b.p50.toFixed(1), 'p99 ms': +b.p99.toFixed(1) },
        ...Object.entries(stages).map(([path, xs]) => stageRow(path, xs)),
        ...inside.map(({ what, count, meanMs }) => ({ path: `    mean: ${what}`, samples: count, 'p50 ms': +meanMs.toFixed(1), 'p99 ms': '' })),
        { path: 'raw kafkajs produce → consume, one hop', samples: c.count, 'p50 ms': +c.p50.toFixed(1), 'p99 ms': +c.p99.toFixed(1) },
      ],
      ratios: [`/stream → ws push p50 ${a.p50.toFixed(0)} ms, → webhook p50 ${b.p50.toFixed(0)} ms: ${(a.p50 / c.p50).toFixed(1)}x / ${(b.p50 / c.p50).toFixed(1)}x one raw Kafka hop (the path has four hops, two Postgres transactions and a Redis write)`, ...slowest],
    };
  } finally {
    for (const [p] of started) await stopProcess(p);
    receiver.close();
    await db('core.apps').where({ app_id: appId }).del();
  }
}

/**
 * Where the time of each measured block went, from the create times of the records each app
 * produced (chain-ingest's on chain.raw, chain-parser's on chain.tx, tx-matcher's on tx.push):
 * one clock, so the stages add up to the whole; and the three slowest posts with their stages.
 */
async function stageLatencies(prefix: string, sentAt: Map<string, number>, wsAt: Map<string, number>, hookAt: Map<string, number>): Promise<{ stages: Record<string, number[]>; slowest: string[] }> {
  const byHash = async (topic: string, count: number) => {
    const at = new Map<string, number>();
    for (const m of await readTopic(`${prefix}${topic}`, count, 60_000)) {
      const hash = (JSON.parse(m.value!.toString()) as { tx: { tx_hash: string } }).tx.tx_hash;
      if (!at.has(hash)) at.set(hash, Number(m.timestamp));
    }
    return at;
  };
  const posts = [...sentAt].sort((x, y) => x[1] - y[1]);
  // chain.raw carries the posted body: its records are in the order of the posts (the warm-up first).
  const raw = (await readTopic(`${prefix}${TOPICS.chainRaw.name}`, posts.length + WARMUP_POSTS, 60_000)).map((m) => Number(m.timestamp)).sort((x, y) => x - y).slice(WARMUP_POSTS);
  const tx = await byHash(TOPICS.chainTx.name, 1);
  const push = await byHash(TOPICS.txPush.name, posts.length + WARMUP_POSTS);
  const out: Record<string, number[]> = { 'POST /stream → on chain.raw (chain-ingest)': [], 'chain.raw → on chain.tx (chain-parser)': [], 'chain.tx → on tx.push (tx-matcher)': [], 'tx.push → WebSocket client (tx-gateway)': [], 'tx.push → webhook receipt (webhook-dispatcher)': [] };
  const stages = Object.values(out);
  posts.forEach(([hash, t0], i) => {
    const [r, t, p] = [raw[i], tx.get(hash), push.get(hash)];
    if (r === undefined || t === undefined || p === undefined) return;
    [r - t0, t - r, p - t, wsAt.get(hash)! - p, hookAt.get(hash)! - p].forEach((v, k) => stages[k].push(v));
  });
  // Where the slowest blocks' time went: the tail is what the p99 figures show.
  const slowest = posts
    .map(([hash, t0], i) => ({ hash, t0, i }))
    .filter(({ hash, i }) => raw[i] !== undefined && push.has(hash) && tx.has(hash))
    .map(({ hash, t0, i }) => ({ i, total: Math.max(wsAt.get(hash)!, hookAt.get(hash)!) - t0, split: [raw[i] - t0, tx.get(hash)! - raw[i], push.get(hash)! - tx.get(hash)!, wsAt.get(hash)! - push.get(hash)!, hookAt.get(hash)! - push.get(hash)!] }))
    .sort((a, b) => b.total - a.total)
    .slice(0, 3)
    .map((b) => `slowest posts: #${b.i} ${b.total} ms = chain-ingest ${b.split[0]}, chain-parser ${b.split[1]}, tx-matcher ${b.split[2]}, then tx-gateway ${b.split[3]} / webhook-dispatcher ${b.split[4]} ms`);
  return { stages: out, slowest };
}

/** One kafkajs produce → consume hop, the same rate, in the same run. */
async function rawKafkaLatency(prefix: string): Promise<number[]> {
  const kafka = new Kafka({ clientId: 'bench-raw', brokers: BROKERS, logLevel: logLevel.NOTHING });
  const topic = `${prefix}raw-latency`;
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
  await admin.disconnect();
  const out: number[] = [];
  const c = kafka.consumer({ groupId: `${prefix}raw` });
  await c.connect();
  await c.subscribe({ topic, fromBeginning: true });
  const joined = new Promise((r) => c.on(c.events.GROUP_JOIN, r));
  await c.run({ eachMessage: async ({ message }) => void out.push(Date.now() - Number(message.value!.toString())) });
  await joined;
  const p = kafka.producer();
  await p.connect();
  // The same warm-up as the pipeline's: sent at the same rate, not measured.
  for (let i = 0; i < WARMUP_POSTS + LATENCY_POSTS; i++) {
    await p.send({ topic, acks: -1, messages: [{ value: String(Date.now()) }] });
    await new Promise((r) => setTimeout(r, 500));
  }
  await waitFor(() => out.length >= WARMUP_POSTS + LATENCY_POSTS, { timeoutMs: 60_000, what: 'raw messages consumed' });
  await p.disconnect();
  await c.disconnect();
  return out.slice(WARMUP_POSTS);
}

/**
 * webhook-dispatcher's live path as deployed (`createWebhookDispatcher`: lease, sign, POST,
 * record), fed as the consumer feeds it (up to WEBHOOK_MAX_RECORDS_PER_CALL records per handler call, its default), next to raw keep-alive
 * POST loops sending the same bodies and headers with the same parallelism:
 * - many applications: each handler call has one push per application, so every POST carries
 *   one transaction and `WEBHOOK_CONCURRENCY` (16) applications are POSTed to side by side; the
 *   raw baseline runs 16 loops over as many keep-alive connections;
 * - one application: its pushes leave in order, 100 per POST; the raw baseline is one loop
 *   sending the same 100-transaction bodies.
 */
async function webhookLivePath(db: ReturnType<typeof createDb>): Promise<{ rows: Record<string, string | number>[]; ratios: string[] }> {
  const concurrency = 16;
  const box = new SecretBox(randomBytes(32).toString('hex'));
  let posts = 0;
  let transactions = 0;
  const receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      posts++;
      transactions += (JSON.parse(Buffer.concat(chunks).toString()) as unknown[]).length;
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', 4096, () => r()));
  const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  const tag = randomBytes(3).toString('hex');
  const appIds = Array.from({ length: WEBHOOK_APPS }, (_, i) => `bench-wh-${tag}-${i}`);
  const keys = new ApiKeyRepository(db);
  for (const a of appIds) await keys.createApp(a, a);
  await db('tx.app_configs').insert(appIds.map((a) => ({ app_id: a, enable_webhook: true, webhook_url: hookUrl, webhook_secret_enc: box.seal('bench secret') })));
  const dispatcher = createWebhookDispatcher({ db, secretBox: box, sender: { allowPrivate: true, ...SENDER_DEFAULTS }, logger: silent, registry: new Registry(), concurrency });
  const all = records();
  const pushesOf = (app: (i: number) => string, n: number, from: number): TxPushMessage[] =>
    Array.from({ length: n }, (_, k) => {
      const i = from + k;
      const r = all[i % all.length];
      return { message_id: `w${i}-${randomBytes(4).toString('hex')}`, app_id: app(i), tx_id: String(i), network: r.network, listen_address: [r.tx.sender!], is_reorg_resend: false, orphaned: false, ws: false, webhook: true, matched_at: Date.now(), tx: r.tx };
    });
  const timeDispatcher = async (pushes: TxPushMessage[]) => {
    [posts, transactions] = [0, 0];
    const cpu0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < pushes.length; i += WEBHOOK_CALL) await dispatcher.handlePushes(pushes.slice(i, i + WEBHOOK_CALL));
    // The attempts log is written in the background: its insert counts in the dispatcher's time,
    // not in the raw loop's that follows.
    await dispatcher.flushAttempts();
    return { s: Number(process.hrtime.bigint() - t0) / 1e9, cpuUs: cpuSince(cpu0), posts, transactions };
  };
  const timeRaw = async (pushes: TxPushMessage[], perPost: number, lanes: number) => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: lanes });
    const post = (body: string, headers: Record<string, string>) =>
      new Promise<void>((resolve, reject) => {
        const req = http.request(hookUrl, { method: 'POST', agent, headers: { ...headers, 'content-length': Buffer.byteLength(body) } }, (res) => {
          res.resume();
          res.on('end', () => resolve());
        });
        req.on('error', reject);
        req.end(body);
      });
    [posts, transactions] = [0, 0];
    let next = 0;
    const cpu0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    // The same work per POST as the dispatcher's, without the database: body, id, signature, POST.
    await Promise.all(
      Array.from({ length: lanes }, async () => {
        while (next < pushes.length) {
          const part = pushes.slice(next, next + perPost);
          next += perPost;
          const body = JSON.stringify(part.map((p) => toTransactionResult(p.tx)));
          await post(body, webhookHeaders(batchId(part.map((p) => p.message_id)), Math.floor(Date.now() / 1000), body, 'bench secret'));
        }
      }),
    );
    const s = Number(process.hrtime.bigint() - t0) / 1e9;
    const cpuUs = cpuSince(cpu0);
    agent.destroy();
    return { s, cpuUs, posts, transactions };
  };
  const rows: Record<string, string | number>[] = [];
  const ratios: string[] = [];
  // Warm-up of both sides (JIT, first connections), untimed.
  const warm = pushesOf((i) => appIds[i % appIds.length], 400, 0);
  await timeDispatcher(warm);
  await timeRaw(warm, 1, concurrency);

  // The machine is shared: the two sides alternate for ROUNDS rounds and the median of the
  // per-round ratios is reported, with its range.
  const cases = [
    { name: `${WEBHOOK_APPS} applications, 1 tx per POST`, raw: `raw keep-alive POST loops (${concurrency})`, app: (i: number) => appIds[i % appIds.length], perPost: 1, lanes: concurrency },
    { name: '1 application, 100 tx per POST', raw: 'raw keep-alive POST loop', app: () => appIds[0], perPost: 100, lanes: 1 },
  ];
  for (const [c, spec] of cases.entries()) {
    const perRound: Array<{ d: number; r: number; dCpu: number; rCpu: number; dPosts: number; rPosts: number }> = [];
    for (let round = 0; round < WEBHOOK_ROUNDS; round++) {
      const pushes = pushesOf(spec.app, WEBHOOKS, (c * WEBHOOK_ROUNDS + round + 1) * 100_000);
      const d = await timeDispatcher(pushes);
      const r = await timeRaw(pushes, spec.perPost, spec.lanes);
      perRound.push({ d: d.transactions / d.s, r: r.transactions / r.s, dCpu: d.cpuUs / d.transactions, rCpu: r.cpuUs / r.transactions, dPosts: d.posts, rPosts: r.posts });
    }
    const ratiosOf = perRound.map((x) => x.d / x.r).sort((a, b) => a - b);
    rows.push(
      { case: spec.name, path: 'webhook-dispatcher live path', 'posts per round': perRound[0].dPosts, 'median tx/s': Math.round(median(perRound.map((x) => x.d))), 'median CPU µs/tx': +median(perRound.map((x) => x.dCpu)).toFixed(1) },
      { case: '', path: spec.raw, 'posts per round': perRound[0].rPosts, 'median tx/s': Math.round(median(perRound.map((x) => x.r))), 'median CPU µs/tx': +median(perRound.map((x) => x.rCpu)).toFixed(1) },
    );
    const cpuRatios = perRound.map((x) => x.rCpu / x.dCpu);
    ratios.push(`webhooks, ${spec.name}: dispatcher ${median(ratiosOf).toFixed(2)}x the ${spec.raw} (median of ${WEBHOOK_ROUNDS} rounds, ${ratiosOf[0].toFixed(2)}–${ratiosOf.at(-1)!.toFixed(2)}); by CPU per transaction (this process: sender and receiver) ${median(cpuRatios).toFixed(2)}x`);
  }
  await dispatcher.close();
  receiver.close();
  await db('core.apps').whereIn('app_id', appIds).del();
  return { rows, ratios };
}

/**
 * One tenant never slows another: handler calls as the consumer makes them, one after the other,
 * one every 100 ms, each with one push of the measured application (alone), or also one of an
 * application whose receiver answers 200 after SLOW_RECEIVER_MS (beside), with the scheduler
 * running every 500 ms as deployed. The latency of a push is from its call's planned start to its
 * arrival at the receiver (a call that starts late because the one before ran long counts that
 * wait, as a consumer does). The raw baseline: keep-alive POSTs of the same body to the receiver.
 */
async function webhookTenants(db: ReturnType<typeof createDb>): Promise<{ rows: Record<string, string | number>[]; ratios: string[] }> {
  const calls = 40;
  const intervalMs = 100;
  const arrivals = new Map<string, number>();
  const serve = (delayMs: number) =>
    http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const now = performance.now();
        for (const t of JSON.parse(Buffer.concat(chunks).toString()) as Array<{ txHash: string }>) arrivals.set(t.txHash, now);
        setTimeout(() => res.writeHead(200).end(), delayMs);
      });
    });
  const fast = serve(0);
  const slow = serve(SLOW_RECEIVER_MS);
  const urlOf = async (server: http.Server) => {
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  };
  const [fastUrl, slowUrl] = [await urlOf(fast), await urlOf(slow)];
  const tag = randomBytes(3).toString('hex');
  const fastApp = `bench-fast-${tag}`;
  const slowApp = `bench-slow-${tag}`;
  const keys = new ApiKeyRepository(db);
  for (const a of [fastApp, slowApp]) await keys.createApp(a, a);
  await db('tx.app_configs').insert([
    { app_id: fastApp, enable_webhook: true, webhook_url: fastUrl, webhook_secret_enc: null },
    { app_id: slowApp, enable_webhook: true, webhook_url: slowUrl, webhook_secret_enc: null },
  ]);
  const r0 = records()[0];
  let seq = 0;
  const pushOf = (appId: string): TxPushMessage => {
    const i = seq++;
    return { message_id: `t${i}-${tag}`, app_id: appId, tx_id: String(i), network: r0.network, listen_address: [r0.tx.sender!], is_reorg_resend: false, orphaned: false, ws: false, webhook: true, matched_at: Date.now(), tx: { ...r0.tx, tx_hash: `0x${randomBytes(32).toString('hex')}` } };
  };
  const box = new SecretBox(randomBytes(32).toString('hex'));
  const config = webhookDispatcherConfig;
  const deployed = (name: keyof typeof config) => (config[name].parse(undefined) as { value: number }).value;
  const dispatcher = createWebhookDispatcher({ db, secretBox: box, sender: { allowPrivate: true, ...SENDER_DEFAULTS }, logger: silent, registry: new Registry(), concurrency: deployed('WEBHOOK_CONCURRENCY'), callWaitMs: deployed('WEBHOOK_CALL_WAIT_MS') });
  let scheduling = true;
  const scheduler = (async () => {
    while (scheduling) {
      await dispatcher.drainDue().catch(() => 0);
      await new Promise((r) => setTimeout(r, deployed('WEBHOOK_SCHEDULER_INTERVAL_MS')));
    }
  })();
  const measure = async (withSlow: boolean) => {
    const planned = new Map<string, number>();
    const t0 = performance.now() + 50;
    for (let i = 0; i < calls; i++) {
      const due = t0 + i * intervalMs;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const mine = pushOf(fastApp);
      planned.set(mine.tx.tx_hash, due);
      await dispatcher.handlePushes(withSlow ? [pushOf(slowApp), mine] : [mine]);
    }
    const deadline = performance.now() + 30_000;
    while ([...planned.keys()].some((h) => !arrivals.has(h)) && performance.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    return stats([...planned].map(([h, due]) => (arrivals.get(h) ?? Infinity) - due));
  };
  const stats = (samples: number[]) => ({ ...latencyStats(samples), max: Math.max(...samples) });
  const rawLatency = async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const body = JSON.stringify([toTransactionResult(r0.tx)]);
    const out: number[] = [];
    for (let i = 0; i < calls; i++) {
      const t = performance.now();
      await new Promise<void>((resolve, reject) => {
        const req = http.request(fastUrl, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
          res.resume();
          res.on('end', () => resolve());
        });
        req.on('error', reject);
        req.end(body);
      });
      out.push(performance.now() - t);
      await new Promise((r) => setTimeout(r, intervalMs));
    }
    agent.destroy();
    return stats(out);
  };
  await measure(false); // warm-up: first statements, connections
  const alone = await measure(false);
  const beside = await measure(true);
  const raw = await rawLatency();
  scheduling = false;
  await scheduler;
  await dispatcher.close();
  fast.close();
  slow.closeAllConnections();
  slow.close();
  await db('core.apps').whereIn('app_id', [fastApp, slowApp]).del();
  const row = (c: string, st: ReturnType<typeof stats>) => ({ case: c, calls, 'p50 ms': +st.p50.toFixed(1), 'p99 ms': +st.p99.toFixed(1), 'max ms': +st.max.toFixed(1) });
  return {
    rows: [row('webhook latency, application alone', alone), row(`webhook latency, beside a receiver answering after ${SLOW_RECEIVER_MS / 1000} s`, beside), row('raw keep-alive POST to the same receiver', raw)],
    ratios: [`one tenant beside a ${SLOW_RECEIVER_MS / 1000} s receiver: p50 ${beside.p50.toFixed(0)} ms vs ${alone.p50.toFixed(0)} ms alone (+${(beside.p50 - alone.p50).toFixed(0)} ms), max ${beside.max.toFixed(0)} vs ${alone.max.toFixed(0)} ms; raw POST p50 ${raw.p50.toFixed(1)} ms`],
  };
}
