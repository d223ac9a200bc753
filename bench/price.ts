import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Kafka, Partitioners, logLevel } from 'kafkajs';
import { Registry } from 'prom-client';
import { TOPICS, loadContracts } from '@chainpipe/contracts';
import { ApiKeyRepository, createDb, ensureDatabase, migrateLatest, type Knex } from '@chainpipe/db';
import { createKeyResolver, generateApiKey, listen } from '@chainpipe/http';
import { BatchConsumer, TopicProducer, createKafka, ensureTopics } from '@chainpipe/kafka';
import { latestQuoteItem, type CryptoQuoteMessage, type TokenRow } from '@chainpipe/price';
import { QuoteHistoryRepository, QuoteStore, ReferenceRepository, cryptoQuoteKey, importReference } from '@chainpipe/price-store';
import { createRedis, type Redis } from '@chainpipe/redis';
import { createLogger, systemClock } from '@chainpipe/runtime';
import { createMarketGatewayApp, priceModule } from '@chainpipe/market-gateway';
import { quotesHandler } from '@chainpipe/price-writer';
import { latencyStats, machine, sustained } from './lib-stats';

/**
 * 1. GET /price/api/v1/quotes/latest for 1, 100 and 1000 token ids through the real
 *    market-gateway express app (auth, parameters, reference snapshot, Redis MGET, items,
 *    envelope) next to a raw node:http handler doing the same Redis MGET and building the same
 *    items from an in-memory id → token map, same run, same client, alternating rounds.
 * 2. The quote pipeline's write side, updates/s end to end: N quotes published with our
 *    producer, consumed by our consumer running the price-writer's handler (history insert in
 *    Postgres, latest in Redis), until all are committed — next to raw kafkajs send + eachBatch
 *    doing the same insert and Redis writes without validation, retries or metrics.
 *
 * BENCH_PRICE_PARTS picks the parts (latest,pipeline; both by default) and BENCH_PRICE_SIZES the
 * id counts of the first (1,100,1000).
 *
 * Uses BENCH_PRICE_DATABASE_URL (default chainpipe_bench: migrated; 1000 bench tokens are
 * upserted on the Ethereum chain, ids stable across runs), Redis under a key prefix of its own
 * (deleted afterwards), and the broker of BENCH_KAFKA_BROKERS / KAFKA_BROKERS.
 */

/**
 * Per id count and path, in alternating rounds. Rounds of ~1.5 s a side, after an unmeasured
 * warm-up of each: with rounds of ~0.4 s, or the code's warm-up inside the first of two, a run
 * mostly measured the servers' first requests and the collector's pauses of the one process both
 * servers and the client share (1 id: 0.69–0.80× and p99 1.2–1.44× against 0.81–0.85× and
 * 1.01–1.08× with these, the same machine and minute).
 */
const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 9_000);
const ROUNDS = Number(process.env.BENCH_PRICE_ROUNDS ?? 6);
/** Unmeasured requests of each path before its first round, in ms. */
const WARMUP_MS = Number(process.env.BENCH_PRICE_WARMUP_MS ?? 2_000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);
const SIZES = (process.env.BENCH_PRICE_SIZES ?? '1,100,1000').split(',').map(Number);
/** `latest` (the quotes/latest request rates) and/or `pipeline` (the write side). */
const PARTS = (process.env.BENCH_PRICE_PARTS ?? 'latest,pipeline').split(',');
const PIPELINE_QUOTES = Number(process.env.BENCH_PRICE_PIPELINE_QUOTES ?? 20_000);

type Json = any;

async function benchTokens(db: Knex): Promise<TokenRow[]> {
  const tokens = Array.from({ length: 1000 }, (_, i) => ({
    chain: 1,
    name: `Bench Token ${i}`,
    symbol: `BT${i}`,
    decimals: 18,
    contract_address: `0x${'be'.repeat(14)}${i.toString(16).padStart(12, '0')}`,
    logo_url: null,
    external_id: String(900_000 + i),
  }));
  await importReference(db, { chains: [], tokens });
  const all = await new ReferenceRepository(db).allTokens();
  return all.filter((t) => t.symbol.startsWith('BT') && t.name.startsWith('Bench Token '));
}

function quote(externalId: string, asOf: number, price: number): CryptoQuoteMessage {
  return {
    kind: 'crypto',
    source: 'bench',
    external_id: externalId,
    symbol: 'BT',
    name: 'Bench',
    as_of: asOf,
    fetched_at: asOf,
    usd: { price, market_cap: price * 1e9, volume_24h: price * 1e7, volume_change_24h: 1.5, percent_change_1h: 0.1, percent_change_24h: -1.2, percent_change_7d: 3.4, percent_change_30d: 5.6, fully_diluted_valuation: price * 2e9, circulating_supply: 1e9, total_supply: 2e9, max_supply: null },
  };
}

/** The raw baseline: node:http, the same MGET, the same items, nothing else. */
async function rawServer(redis: Redis, byId: Map<number, TokenRow>): Promise<{ url: string; close: () => Promise<void> }> {
  const usd = { id: 1, code: 'USD' };
  const server = http.createServer((req, res) => {
    const ids = new URL(req.url ?? '/', 'http://x').searchParams.get('ids')!.split(',').map(Number);
    const tokens = ids.map((id) => byId.get(id)!);
    redis.mget(...tokens.map((t) => cryptoQuoteKey(t.external_id!))).then(
      (raw) => {
        const items = raw.map((v, i) => {
          const q = JSON.parse(v!) as CryptoQuoteMessage;
          return latestQuoteItem(tokens[i], usd, q.usd, 1, q.as_of);
        });
        res.setHeader('content-type', 'application/json');
        res.setHeader('cache-control', 'public, max-age=3, s-maxage=3');
        res.end(JSON.stringify({ code: 0, msg: 'success', data: { items } }));
      },
      (err) => {
        res.statusCode = 500;
        res.end(String(err));
      },
    );
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function deletePrefix(redis: Redis, prefix: string): Promise<void> {
  // Keys come back with the prefix; ioredis adds it again on DEL, so strip it.
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length) await redis.del(...keys.map((k) => k.slice(prefix.length)));
  } while (cursor !== '0');
}

async function quotesLatest(db: Knex, redis: Redis, prefix: string, redisUrl: string): Promise<void> {
  const tokens = await benchTokens(db);
  const now = Date.now();
  await new QuoteStore(redis).writeLatest(tokens.map((t, i) => quote(t.external_id!, now, 1 + i / 1000)));

  const keys = new ApiKeyRepository(db);
  const appId = `bench-${randomBytes(3).toString('hex')}`;
  await keys.createApp(appId, 'price bench');
  const key = generateApiKey();
  await keys.addKey(appId, key.keyId, key.secretHash, 'bench');
  const logger = createLogger({ name: 'bench-price', level: 'warn' });
  const gatewayRedis = createRedis({ url: redisUrl, keyPrefix: prefix });
  const app = createMarketGatewayApp({
    logger,
    registry: new Registry(),
    timeoutMs: 15_000,
    modules: [
      priceModule({
        db,
        redis: gatewayRedis,
        contracts: loadContracts(),
        logger,
        registry: new Registry(),
        resolveKey: createKeyResolver((id) => keys.findKey(id)),
        clock: systemClock,
        bodyLimitBytes: 1024 * 1024,
        freshness: { quoteMaxAgeMs: 3_600_000, fiatRatesMaxAgeMs: 3_600_000 },
        referenceRefreshMs: 60_000,
        poolUpstream: { baseUrl: 'http://127.0.0.1:9/unused', apiKey: '', timeoutMs: 1_000 },
        poolCacheTtlMs: 3_600_000,
      }),
    ],
  });
  const gateway = await listen(app, 0, '127.0.0.1');
  const gatewayUrl = `http://127.0.0.1:${gateway.address.port}`;
  const raw = await rawServer(redis, new Map(tokens.map((t) => [t.id, t])));

  const rows: Record<string, string | number>[] = [];
  for (const size of SIZES) {
    const path = `/price/api/v1/quotes/latest?ids=${tokens.slice(0, size).map((t) => t.id).join(',')}`;
    const get = (base: string) => async () => {
      const res = await fetch(base + path, { headers: { 'x-api-key': key.token } });
      const body = (await res.json()) as Json;
      if (res.status !== 200 || body.data.items.length !== size) throw new Error(`status ${res.status}`);
    };
    // Same answer from both before timing.
    const a = (await (await fetch(gatewayUrl + path, { headers: { 'x-api-key': key.token } })).json()) as Json;
    const b = (await (await fetch(raw.url + path)).json()) as Json;
    if (JSON.stringify(a) !== JSON.stringify(b)) throw new Error(`gateway and raw answers differ for ${size} ids`);
    const lat = { gateway: [] as number[], raw: [] as number[] };
    const ms = { gateway: 0, raw: 0 };
    // CPU of this process (client, server, Redis client) per request: what each path costs
    // whatever else the machine runs, where the rates mostly say how long it waited for a core.
    const cpuUs = { gateway: 0, raw: 0 };
    const cpuRequests = { gateway: 0, raw: 0 };
    let errors = 0;
    const roundRatios: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const rate = { gateway: 0, raw: 0 };
      for (const which of ['gateway', 'raw'] as const) {
        const cpu0 = process.cpuUsage();
        const r = await sustained(get(which === 'gateway' ? gatewayUrl : raw.url), { concurrency: CONCURRENCY, durationMs: DURATION_MS / ROUNDS, warmupMs: round === 0 ? WARMUP_MS : 0 });
        const cpu = process.cpuUsage(cpu0);
        lat[which].push(...r.latencies);
        ms[which] += r.elapsedMs;
        // The first round's warm-up is not counted in its requests.
        if (round > 0 || ROUNDS === 1) {
          cpuUs[which] += cpu.user + cpu.system;
          cpuRequests[which] += r.latencies.length;
        }
        errors += r.errors;
        rate[which] = r.latencies.length / r.elapsedMs;
      }
      roundRatios.push(rate.gateway / rate.raw);
    }
    const g = latencyStats(lat.gateway);
    const w = latencyStats(lat.raw);
    const rpsG = (g.count / ms.gateway) * 1000;
    const rpsW = (w.count / ms.raw) * 1000;
    rows.push({
      ids: size,
      'gateway req/s': Math.round(rpsG),
      'raw req/s': Math.round(rpsW),
      'req/s ratio': Number((rpsG / rpsW).toFixed(2)),
      'median round ratio': Number(latencyStats(roundRatios).p50.toFixed(2)),
      'gateway p99 ms': Number(g.p99.toFixed(2)),
      'raw p99 ms': Number(w.p99.toFixed(2)),
      'p99 ratio': Number((g.p99 / w.p99).toFixed(2)),
      'gateway CPU µs/req': Math.round(cpuUs.gateway / cpuRequests.gateway),
      'raw CPU µs/req': Math.round(cpuUs.raw / cpuRequests.raw),
      errors,
    });
  }
  console.table(rows);
  await gateway.close();
  await raw.close();
  gatewayRedis.disconnect();
}

async function pipeline(db: Knex, redis: Redis, brokers: string[]): Promise<void> {
  const prefix = `bench-${Date.now().toString(36)}.`;
  const logger = createLogger({ name: 'bench-price', level: 'warn' });
  const kafka = createKafka({ brokers, clientId: 'bench-price', logger });
  const admin = kafka.admin();
  await admin.connect();
  await ensureTopics(admin, [TOPICS.priceQuotes], { prefix });
  await ensureTopics(admin, [TOPICS.priceQuotes], { prefix: `${prefix}raw.` });
  await admin.disconnect();
  const base = Date.now();
  const messages = Array.from({ length: PIPELINE_QUOTES }, (_, i) => quote(String(800_000 + (i % 2000)), base + i, 1 + i / 1e6));

  // Ours: validating producer → consumer with retry/DLQ/metrics → the price-writer's handler.
  const contracts = loadContracts();
  const registry = new Registry();
  const producer = new TopicProducer({ kafka, contracts, logger, registry, topicPrefix: prefix });
  await producer.connect();
  let handled = 0;
  let doneOurs!: () => void;
  const oursDone = new Promise<void>((r) => (doneOurs = r));
  const handler = quotesHandler({ history: new QuoteHistoryRepository(db), store: new QuoteStore(redis), registry, clock: systemClock });
  const consumer = new BatchConsumer({
    kafka,
    groupId: `${prefix}writer`,
    spec: TOPICS.priceQuotes,
    contracts,
    producer,
    logger,
    registry,
    topicPrefix: prefix,
    maxRecordsPerCall: 500,
    onFatal: (reason, err) => console.error(reason, err),
    handler: async (records, ctx) => {
      await handler(records, ctx);
      handled += records.length;
      if (handled >= PIPELINE_QUOTES) doneOurs();
    },
  });
  await consumer.start();
  await new Promise((r) => setTimeout(r, 3_000)); // group join before the clock starts
  const t0 = Date.now();
  for (let i = 0; i < messages.length; i += 1000) await producer.publish(TOPICS.priceQuotes, messages.slice(i, i + 1000).map((value) => ({ value })));
  await oursDone;
  const oursMs = Date.now() - t0;
  await consumer.stop();
  await producer.disconnect();

  // Raw: kafkajs send + eachBatch with the same insert and Redis writes, nothing else.
  const rawKafka = new Kafka({ clientId: 'bench-price-raw', brokers, logLevel: logLevel.NOTHING });
  const rawTopic = `${prefix}raw.${TOPICS.priceQuotes.name}`;
  const rawProducer = rawKafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  await rawProducer.connect();
  const rawConsumer = rawKafka.consumer({ groupId: `${prefix}raw-writer` });
  await rawConsumer.connect();
  await rawConsumer.subscribe({ topic: rawTopic, fromBeginning: true });
  let rawHandled = 0;
  let doneRaw!: () => void;
  const rawDone = new Promise<void>((r) => (doneRaw = r));
  const store = new QuoteStore(redis);
  await rawConsumer.run({
    eachBatch: async ({ batch }) => {
      const values = batch.messages.map((m) => JSON.parse(m.value!.toString()) as CryptoQuoteMessage);
      await db('price.quote_history')
        .insert(values.map((m) => ({ external_id: m.external_id, last_updated: new Date(m.as_of), price_usd: m.usd.price, quote: JSON.stringify(m) })))
        .onConflict(['external_id', 'last_updated'])
        .ignore();
      await store.writeLatest(values);
      rawHandled += values.length;
      if (rawHandled >= PIPELINE_QUOTES) doneRaw();
    },
  });
  await new Promise((r) => setTimeout(r, 3_000));
  const t1 = Date.now();
  // Shifted timestamps: the same work (new history rows, newer latest values), not conflicts.
  const shifted = messages.map((m) => ({ ...m, as_of: m.as_of + PIPELINE_QUOTES }));
  for (let i = 0; i < shifted.length; i += 1000) {
    await rawProducer.send({ topic: rawTopic, acks: -1, messages: shifted.slice(i, i + 1000).map((m) => ({ key: TOPICS.priceQuotes.key({ value: m }), value: JSON.stringify(m) })) });
  }
  await rawDone;
  const rawMs = Date.now() - t1;
  await rawConsumer.disconnect();
  await rawProducer.disconnect();

  const ours = (PIPELINE_QUOTES / oursMs) * 1000;
  const rawRate = (PIPELINE_QUOTES / rawMs) * 1000;
  console.table([{ quotes: PIPELINE_QUOTES, 'pipeline updates/s': Math.round(ours), 'raw kafkajs updates/s': Math.round(rawRate), ratio: Number((ours / rawRate).toFixed(2)) }]);
  await db('price.quote_history').whereRaw("quote->>'source' = 'bench'").delete();
}

export async function run(): Promise<void> {
  const url = process.env.BENCH_PRICE_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/chainpipe_bench';
  if (!/bench/.test(new URL(url).pathname)) throw new Error('BENCH_PRICE_DATABASE_URL must name a database with "bench" in its name');
  const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379/0';
  const brokers = (process.env.BENCH_KAFKA_BROKERS ?? process.env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(',');
  await ensureDatabase(url);
  const db = createDb({ url, poolMax: 10, applicationName: 'bench-price' });
  await migrateLatest(db);
  const prefix = `bench:price:${randomBytes(4).toString('hex')}:`;
  const redis = createRedis({ url: redisUrl, keyPrefix: prefix });
  console.log(`machine: ${machine()}; concurrency ${CONCURRENCY}; ${DURATION_MS / 1000} s per size and path in ${ROUNDS} alternating rounds`);
  try {
    if (PARTS.includes('latest')) await quotesLatest(db, redis, prefix, redisUrl);
    if (PARTS.includes('pipeline')) await pipeline(db, redis, brokers);
  } finally {
    await deletePrefix(redis, prefix);
    redis.disconnect();
    await db.destroy();
  }
}
