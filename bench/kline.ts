import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, loadavg } from 'node:os';
import { Partitioners, type Kafka } from 'kafkajs';
import pg from 'pg';
import { Registry } from 'prom-client';
import { WebSocketServer, WebSocket } from 'ws';
import { TOPICS, loadContracts, type KlineCandlesMessage, type MarketTickMessage } from '@chainpipe/contracts';
import { ApiKeyRepository, createDb, ensureDatabase, int4Array, migrateLatest, type Knex } from '@chainpipe/db';
import { up as backfillRollups } from '../libs/db/migrations/20261128160000_kline_rollups_stored';
import { createKeyResolver, generateApiKey, listen, routeUpgrades } from '@chainpipe/http';
import { BatchConsumer, TopicProducer, createKafka, ensureTopics, type BatchHandler } from '@chainpipe/kafka';
import { CandleRepository, LatestCandles, PoolRepository } from '@chainpipe/kline-store';
import { createRedis } from '@chainpipe/redis';
import { createLogger, systemClock, type Field } from '@chainpipe/runtime';
import { createTicksHandler, klineAggregatorConfig } from '@chainpipe/kline-aggregator';
import { createMarketGatewayApp, klineModule } from '@chainpipe/market-gateway';
import { cpuBetween, cpuSnapshot, latencyStats, machine, median, printTable, sustained, type CpuSnapshot } from './lib-stats';
import { deleteTopicsWithPrefix } from '@chainpipe/testing';
import { WsFleet } from './lib-ws-fleet';

/**
 * The candlestick hot paths, each next to a raw baseline doing the same work in the same run:
 * 1. aggregator throughput (ticks → Postgres upserts of 9 intervals → Redis → kline.candles.v2)
 *    vs a do-nothing consume of the same ticks by the same consumer, for 100, 1,000 and 10,000
 *    pools (BENCH_KLINE_POOLS), each in BENCH_KLINE_ROUNDS rounds on pools and a ticks topic of
 *    their own (the pools with BENCH_KLINE_HISTORY_DAYS days of daily candles first); then the
 *    consumer lag while 10,000 pools send one tick a second each for BENCH_KLINE_SUSTAIN_SECONDS;
 * 2. tick → WebSocket client latency at a steady rate (aggregator + gateway hub in this process,
 *    a real `ws` client) vs raw kafkajs produce → consume latency;
 * 3. fan-out of one pool's candles to 1,000 and 10,000 connections through the hub vs a raw
 *    `ws` broadcast of the same frames (clients in child processes), and server memory per connection;
 * 4. `GET /kline/api/v1/kline/ohlcv` of 5,000 candles through the gateway app vs a raw
 *    `node:http` + pg handler running the same SQL, in alternating rounds; page 1000 (limit 100) next to page 1.
 * And on request (`steps`), no goal of its own: the aggregator's handler driven alone, its calls
 * one after the other, the process's CPU a tick of each call and of each of its steps (pool
 * check, store, Redis, publish): what a change to one step does, less disturbed by the machine's
 * drift than the throughput's rate.
 * Uses a database of its own (BENCH_KLINE_DATABASE_URL, default chainpipe_bench_kline), its own
 * topics (random prefix) and Redis keys (deleted at the end). BENCH_KLINE_PARTS picks the parts
 * (throughput, sustained, gateway: the last is 2–4; `ohlcv` alone is 4; `steps`). About 4–6
 * minutes on 2 cores; 330 days of history add about a minute and a half; `steps` half a minute.
 */

const TICKS = Number(process.env.BENCH_KLINE_TICKS ?? 40_000);
/**
 * Rounds of each throughput measurement (their medians are reported): a do-nothing consume of
 * 40,000 ticks takes a quarter of a second, and one such run swings by half on a shared machine.
 */
const THROUGHPUT_ROUNDS = Number(process.env.BENCH_KLINE_ROUNDS ?? 3);
/**
 * Days of daily candles each throughput pool has before its ticks (BENCH_KLINE_HISTORY_DAYS, 0
 * by default, as in the earlier rounds): the table and the weeks, months and years a pool has
 * late in a year, which new pools lack.
 */
const HISTORY_DAYS = Number(process.env.BENCH_KLINE_HISTORY_DAYS ?? 0);
const POOLS = (process.env.BENCH_KLINE_POOLS ?? '100,1000,10000').split(',').map(Number);
const SUSTAIN_POOLS = Number(process.env.BENCH_KLINE_SUSTAIN_POOLS ?? 10_000);
const SUSTAIN_SECONDS = Number(process.env.BENCH_KLINE_SUSTAIN_SECONDS ?? 20);
const SUSTAIN_DRAIN_MS = Number(process.env.BENCH_KLINE_SUSTAIN_DRAIN_MS ?? 60_000);
/** `steps`: handler calls (the first three warm up) of STEP_POOLS pools × 4 ticks each: one partition's call at 10,000 pools. */
const STEP_CALLS = Number(process.env.BENCH_KLINE_STEP_CALLS ?? 40);
const STEP_POOLS = Number(process.env.BENCH_KLINE_STEP_POOLS ?? 3_333);
/** Which parts run: throughput, sustained, gateway (tick → ws latency, fan-out, ohlcv history), ohlcv (the history alone), steps (the handler alone). */
const PARTS = (process.env.BENCH_KLINE_PARTS ?? 'throughput,sustained,gateway').split(',');
const FANOUT = (process.env.BENCH_KLINE_FANOUT ?? '1000,10000').split(',').map(Number);
const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 3_000);
/** Alternating rounds of the ohlcv paths (DURATION_MS per path in all). */
const OHLCV_ROUNDS = Number(process.env.BENCH_KLINE_OHLCV_ROUNDS ?? 4);
const HISTORY_ROWS = 300_000;
/** KLINE_AGGREGATOR_MAX_RECORDS_PER_CALL: the aggregator's default unless BENCH_KLINE_MAX_RECORDS names another. */
const aggregatorSetting = (field: Field<number>, env: string): number => {
  const parsed = field.parse(process.env[env]);
  if ('error' in parsed) throw new Error(`${env} ${parsed.error}`);
  return parsed.value;
};
const MAX_RECORDS = aggregatorSetting(klineAggregatorConfig.KLINE_AGGREGATOR_MAX_RECORDS_PER_CALL, 'BENCH_KLINE_MAX_RECORDS');
/** KLINE_AGGREGATOR_PARTITIONS_CONCURRENTLY: the aggregator's default unless BENCH_KLINE_PARTITIONS_CONCURRENTLY names another. */
const PARTITIONS_CONCURRENTLY = aggregatorSetting(klineAggregatorConfig.KLINE_AGGREGATOR_PARTITIONS_CONCURRENTLY, 'BENCH_KLINE_PARTITIONS_CONCURRENTLY');
/** KLINE_1S_RETENTION_HOURS, in seconds: the aggregator's default (the ticks are of the last hour). */
const SECONDS_RETENTION = aggregatorSetting(klineAggregatorConfig.KLINE_1S_RETENTION_HOURS, 'BENCH_KLINE_1S_RETENTION_HOURS') * 3600;

const silent = createLogger({ name: 'bench-kline', level: 'warn' });

async function seedPools(db: Knex, n: number, tag: string): Promise<number[]> {
  const { rows } = await db.raw<{ rows: { id: number }[] }>(
    `insert into kline.pools (chain_type, chain_id, network_id, pool_address, token, is_active)
     select 'evm', 1, 'eth', ? || lpad(g::text, 40, '0'), 'base', true from generate_series(1, ?) g returning id`,
    [`0x${tag}`, n],
  );
  return rows.map((r) => r.id);
}

/**
 * `days` daily candles before today for each pool, and the weeks, months and years they make
 * (the backfill of the migration that made those stored: what the aggregator would have left).
 */
async function seedHistory(db: Knex, ids: number[], days: number): Promise<void> {
  const today = Math.floor(Date.now() / 86_400_000) * 86_400;
  await db.raw(
    `insert into kline.candles (pool_id, interval, open_time, open, high, low, close, volume, open_src, close_src_time, close_src_rank)
     select p, '1d', d, 100, 101 + (g % 7), 99 - (g % 5), 100.5, 1000 + g, d, d, 1
     from unnest(?::int[]) p cross join generate_series(1, ?) g cross join lateral (select ? - g * 86400 as d) day`,
    [int4Array(ids), days, today],
  );
  await backfillRollups(db);
  await db.raw('analyze kline.candles');
}

function tickFor(poolId: number, i: number, t0: number): MarketTickMessage {
  const price = 100 + Math.sin(i) * 5;
  return {
    pool_id: poolId,
    chain_type: 'evm',
    chain_id: 1,
    network_id: 'eth',
    pool_address: `0xpool${poolId}`,
    token: 'base',
    interval: '1s',
    open_time: t0 + Math.floor(i / 4),
    open: 100,
    high: price + 1,
    low: price - 1,
    close: price,
    volume: i,
    received_at: Date.now(),
    seq: i,
  };
}

async function produceAll(kafka: Kafka, topic: string, ticks: MarketTickMessage[]): Promise<void> {
  const p = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  await p.connect();
  for (let i = 0; i < ticks.length; i += 1000) {
    await p.send({ topic, acks: -1, messages: ticks.slice(i, i + 1000).map((t) => ({ key: TOPICS.marketTicks.key({ value: t }), value: JSON.stringify(t) })) });
  }
  await p.disconnect();
}

const cpuMicros = (u: NodeJS.CpuUsage) => u.user + u.system;
/** The machine's 1-minute load average: on a shared machine, the context of every figure. */
const load = () => +loadavg()[0].toFixed(1);

/**
 * Deletes the run's Redis keys: its candle snapshots would stay for their week-long expiry, and
 * a run at 10,000 pools leaves ~40,000 of them; a few dozen runs made Redis hold gigabytes and
 * slowed every later run's snapshot step.
 */
async function removeKeys(url: string, prefix: string): Promise<void> {
  const plain = createRedis({ url });
  for await (const keys of plain.scanStream({ match: `${prefix}*`, count: 1000 }) as AsyncIterable<string[]>) {
    if (keys.length) await plain.unlink(...keys);
  }
  plain.disconnect();
}

async function createTopics(kafka: Kafka, prefix: string): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  await ensureTopics(admin, [TOPICS.marketTicks, TOPICS.klineCandles], { prefix });
  await admin.disconnect();
}

interface ConsumeSetup {
  kafka: Kafka;
  prefix: string;
  producer: TopicProducer;
}

function benchConsumer(setup: ConsumeSetup, handler: BatchHandler<MarketTickMessage>, fromBeginning: boolean): BatchConsumer<MarketTickMessage> {
  return new BatchConsumer<MarketTickMessage>({
    kafka: setup.kafka,
    groupId: `bench-${randomBytes(4).toString('hex')}`,
    spec: TOPICS.marketTicks,
    contracts: loadContracts(),
    producer: setup.producer,
    logger: silent,
    registry: new Registry(),
    topicPrefix: setup.prefix,
    fromBeginning,
    maxRecordsPerCall: MAX_RECORDS,
    partitionsConcurrently: PARTITIONS_CONCURRENTLY,
    onFatal: (reason, err) => {
      console.error(reason, err);
      process.exit(1);
    },
    handler,
  });
}

/**
 * Time for a consumer with `handler` to work through `count` records of `prefix`'s ticks topic:
 * from the moment it has joined its group (kafkajs' run() resolves after the join) to the end of
 * its last handler call, so the fetches and the decoding count for every handler alike; how
 * many calls it took; and the CPU the whole machine used in that time (Postgres, Redis and the
 * broker included).
 */
async function consumeAll(setup: ConsumeSetup, handler: BatchHandler<MarketTickMessage>, count: number): Promise<{ ms: number; calls: number; machineCpu: ReturnType<typeof cpuBetween> }> {
  let seen = 0;
  let calls = 0;
  let done!: () => void;
  const finished = new Promise<void>((r) => (done = r));
  let lastEnd = 0;
  let atEnd: CpuSnapshot | undefined;
  const consumer = benchConsumer(
    setup,
    async (records, ctx) => {
      await handler(records, ctx);
      seen += records.length;
      calls++;
      lastEnd = performance.now();
      if (seen >= count) {
        atEnd ??= cpuSnapshot();
        done();
      }
    },
    true,
  );
  await consumer.start();
  const atJoin = cpuSnapshot();
  const joined = performance.now();
  await finished;
  await consumer.stop();
  return { ms: lastEnd - joined, calls, machineCpu: cpuBetween(atJoin, atEnd!) };
}

/** The commands' CPU µs a tick, largest first: `node 31, postgres 10, …`. */
const cpuShares = (byCommand: Record<string, number>, ticks: number): string =>
  Object.entries(byCommand)
    .sort((a, b) => b[1] - a[1])
    .map(([comm, s]) => [comm, Math.round((s * 1e6) / ticks)] as const)
    .filter(([, us]) => us > 0)
    .map(([comm, us]) => `${comm} ${us}`)
    .join(', ');

/**
 * Feeds one tick per pool a second for `seconds` while the aggregator consumes, and samples the
 * lag (ticks acknowledged by Kafka but not yet through the handler) every second.
 */
async function sustainedFeed(setup: ConsumeSetup, handler: BatchHandler<MarketTickMessage>, ids: number[], seconds: number) {
  let handled = 0;
  let produced = 0;
  const consumer = benchConsumer(
    setup,
    async (records, ctx) => {
      await handler(records, ctx);
      handled += records.length;
    },
    true,
  );
  await consumer.start();
  const p = setup.kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  await p.connect();
  const topic = setup.prefix + TOPICS.marketTicks.name;
  const samples: Record<string, number>[] = [];
  const t0 = Math.floor(Date.now() / 1000);
  const start = Date.now();
  for (let s = 0; s < seconds; s++) {
    // One second of feed, sent in slices spread over the second as the ingester would.
    const slices = 10;
    for (let k = 0; k < slices; k++) {
      const part = ids.slice(Math.floor((k * ids.length) / slices), Math.floor(((k + 1) * ids.length) / slices));
      const ticks = part.map((id) => ({ ...tickFor(id, s * 4, t0), open_time: t0 + s }));
      await p.send({ topic, acks: -1, messages: ticks.map((t) => ({ key: TOPICS.marketTicks.key({ value: t }), value: JSON.stringify(t) })) });
      produced += ticks.length;
      const due = start + s * 1000 + ((k + 1) * 1000) / slices;
      if (due > Date.now()) await new Promise((r) => setTimeout(r, due - Date.now()));
    }
    samples.push({ second: s + 1, produced, handled, lag: produced - handled });
  }
  const stopAt = Date.now();
  while (handled < produced && Date.now() - stopAt < SUSTAIN_DRAIN_MS) await new Promise((r) => setTimeout(r, 20));
  const drainMs = Date.now() - stopAt;
  const leftAfterDrain = produced - handled;
  await p.disconnect();
  await consumer.stop();
  return { samples, maxLag: Math.max(...samples.map((x) => x.lag)), drainMs, leftAfterDrain };
}

export async function run(): Promise<void> {
  const url = process.env.BENCH_KLINE_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/chainpipe_bench_kline';
  if (!/bench/.test(new URL(url).pathname)) throw new Error('BENCH_KLINE_DATABASE_URL must name a database with "bench" in its name');
  const brokers = (process.env.BENCH_KAFKA_BROKERS ?? process.env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(',');
  await ensureDatabase(url);
  const db = createDb({ url, poolMax: 10, applicationName: 'bench-kline' });
  await migrateLatest(db);
  await db.raw('truncate kline.candles, kline.pools restart identity cascade');
  const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379/0';
  const redisPrefix = `bench-kline-${randomBytes(3).toString('hex')}:`;
  const redis = createRedis({ url: redisUrl, keyPrefix: redisPrefix });
  const prefix = `bench-kline-${randomBytes(3).toString('hex')}.`;
  const kafka = createKafka({ brokers, clientId: 'bench-kline', logger: silent });
  await createTopics(kafka, prefix);
  const contracts = loadContracts();
  const producer = new TopicProducer({ kafka, contracts, logger: silent, registry: new Registry(), topicPrefix: prefix });
  await producer.connect();
  /** What a run leaves behind goes: its Redis keys and its topics (every round's ticks and candles). */
  const cleanUp = async () => {
    await producer.disconnect();
    redis.disconnect();
    await removeKeys(redisUrl, redisPrefix);
    await deleteTopicsWithPrefix(kafka, prefix);
    await db.destroy();
  };
  const candles = new CandleRepository(db);
  const aggregate = createTicksHandler({
    candles,
    pools: new PoolRepository(db),
    latest: new LatestCandles(redis),
    publish: (messages) => producer.publish(TOPICS.klineCandles, messages),
    registry: new Registry(),
    clock: systemClock,
    secondsRetention: SECONDS_RETENTION,
  });
  console.log(`machine: ${machine()}; ${TICKS.toLocaleString('en')} ticks per throughput run${HISTORY_DAYS > 0 ? `, each pool with ${HISTORY_DAYS} days of daily candles before` : ''}`);

  // 1. Aggregator throughput, each pool count on a ticks topic of its own.
  const throughput: Record<string, string | number>[] = [];
  const ratios: string[] = [];
  const consumeOpts = { kafka, producer };
  for (const [n, pools] of (PARTS.includes('throughput') ? POOLS : []).entries()) {
    // Each round on pools and a ticks topic of its own (the same work every time: new candles),
    // the do-nothing consume then the aggregator's; the figures are the rounds' medians.
    const rounds: { raw: Awaited<ReturnType<typeof consumeAll>>; agg: Awaited<ReturnType<typeof consumeAll>>; rawUs: number; aggUs: number }[] = [];
    for (let round = 0; round < THROUGHPUT_ROUNDS; round++) {
      const ids = await seedPools(db, pools, `a${n}r${round}`);
      if (HISTORY_DAYS > 0) await seedHistory(db, ids, HISTORY_DAYS);
      const t0 = Math.floor(Date.now() / 1000) - 3600;
      const ticks = Array.from({ length: TICKS }, (_, i) => tickFor(ids[i % ids.length], Math.floor(i / ids.length), t0));
      const setPrefix = `${prefix}p${pools}r${round}.`;
      await createTopics(kafka, setPrefix);
      await produceAll(kafka, setPrefix + TOPICS.marketTicks.name, ticks);
      const rawCpu = process.cpuUsage();
      const raw = await consumeAll({ ...consumeOpts, prefix: setPrefix }, async () => undefined, TICKS);
      const rawUs = cpuMicros(process.cpuUsage(rawCpu)) / TICKS;
      const aggCpu = process.cpuUsage();
      const agg = await consumeAll({ ...consumeOpts, prefix: setPrefix }, aggregate, TICKS);
      rounds.push({ raw, agg, rawUs, aggUs: cpuMicros(process.cpuUsage(aggCpu)) / TICKS });
    }
    const rate = (r: { ms: number }) => (TICKS / r.ms) * 1000;
    const machineUs = (r: { machineCpu: { busySeconds: number } }) => (r.machineCpu.busySeconds * 1e6) / TICKS;
    const rawRate = median(rounds.map((r) => rate(r.raw)));
    const aggRate = median(rounds.map((r) => rate(r.agg)));
    const aggMachineUs = median(rounds.map((r) => machineUs(r.agg)));
    const rawMachineUs = median(rounds.map((r) => machineUs(r.raw)));
    // CPU of this process per tick: less disturbed by other load on the machine than the rates.
    throughput.push({
      pools,
      ticks: TICKS,
      rounds: rounds.length,
      'aggregator ticks/s': Math.round(aggRate),
      'do-nothing ticks/s': Math.round(rawRate),
      'aggregator CPU µs/tick': Math.round(median(rounds.map((r) => r.aggUs))),
      'do-nothing CPU µs/tick': Math.round(median(rounds.map((r) => r.rawUs))),
      'aggregator machine CPU µs/tick': Math.round(aggMachineUs),
      'do-nothing machine CPU µs/tick': Math.round(rawMachineUs),
      'ticks per call': Math.round(TICKS / median(rounds.map((r) => r.agg.calls))),
      'load average': load(),
    });
    const each = rounds.map((r) => `${Math.round(rate(r.agg))} vs ${Math.round(rate(r.raw))} (${(rate(r.agg) / rate(r.raw)).toFixed(3)}x)`).join(', ');
    ratios.push(`aggregator with ${pools} pools: ${(aggRate / rawRate).toFixed(3)}x the do-nothing consume (medians of ${rounds.length} rounds; each round: ${each})`);
    // The machine's cores at the aggregator's CPU a tick (all processes) bound its rate whatever
    // the overlap: what the ratio could reach on this machine without less work a tick.
    if (aggMachineUs > 0) {
      const ceiling = (cpus().length * 1e6) / aggMachineUs;
      const middle = rounds.map((r) => machineUs(r.agg)).indexOf(aggMachineUs);
      ratios.push(
        `  machine CPU a tick ${Math.round(aggMachineUs)} µs (${cpuShares(rounds[middle].agg.machineCpu.byCommand, TICKS)}) against ${Math.round(rawMachineUs)} µs for the do-nothing consume: ` +
          `${cpus().length} cores allow at most ${Math.round(ceiling)} ticks/s, ${(ceiling / rawRate).toFixed(3)}x the do-nothing consume`,
      );
    }
  }
  if (throughput.length) printTable(throughput);

  // 1c. The handler alone, step by step: its calls one after the other (nothing else runs in this
  // process meanwhile), so the CPU the process spends while a step is awaited is that step's.
  if (PARTS.includes('steps')) {
    const ids = await seedPools(db, STEP_POOLS, 'st');
    const cpuOfStep: Record<string, number> = {};
    const timed = <A extends unknown[], R>(step: string, f: (...args: A) => Promise<R>) => async (...args: A): Promise<R> => {
      const before = process.cpuUsage();
      try {
        return await f(...args);
      } finally {
        cpuOfStep[step] = (cpuOfStep[step] ?? 0) + cpuMicros(process.cpuUsage(before));
      }
    };
    const pools = new PoolRepository(db);
    const latest = new LatestCandles(redis);
    const handler = createTicksHandler({
      pools: { unregistered: timed('pool check', (poolIds: number[]) => pools.unregistered(poolIds)) },
      candles: { applyUpdates: timed('store', (updates: Parameters<CandleRepository['applyUpdates']>[0]) => candles.applyUpdates(updates)) },
      latest: { putMany: timed('Redis', (byPool: Parameters<LatestCandles['putMany']>[0]) => latest.putMany(byPool)) },
      publish: timed('publish', (messages: Parameters<TopicProducer['publish']>[1]) => producer.publish(TOPICS.klineCandles, messages)),
      registry: new Registry(),
      clock: systemClock,
      secondsRetention: SECONDS_RETENTION,
    });
    const t0 = Math.floor(Date.now() / 1000) - 3600;
    const perCall: Record<string, number>[] = [];
    for (let call = 0; call < STEP_CALLS; call++) {
      // Each call a new second of every pool, four ticks each: as a throughput call at 10,000 pools.
      const records = Array.from({ length: STEP_POOLS * 4 }, (_, i) => {
        const value = { ...tickFor(ids[i % STEP_POOLS], Math.floor(i / STEP_POOLS), t0 + call), seq: call * 4 + Math.floor(i / STEP_POOLS) };
        return { topic: 'steps', partition: 0, offset: String(i), key: null, value, headers: {}, timestamp: '0' };
      });
      global.gc?.();
      for (const step of Object.keys(cpuOfStep)) cpuOfStep[step] = 0;
      const before = process.cpuUsage();
      await handler(records, { heartbeat: async () => {}, signal: new AbortController().signal });
      const whole = cpuMicros(process.cpuUsage(before));
      const steps = Object.values(cpuOfStep).reduce((a, b) => a + b, 0);
      if (call >= 3) perCall.push({ ...cpuOfStep, 'its own work': whole - steps, 'whole call': whole });
    }
    const stepRows = Object.keys(perCall[0]).map((step) => {
      const us = perCall.map((c) => c[step] / (STEP_POOLS * 4));
      return { step, 'median µs/tick': +median(us).toFixed(1), 'lowest µs/tick': +Math.min(...us).toFixed(1) };
    });
    console.log(`the handler alone: ${perCall.length} calls of ${STEP_POOLS} pools × 4 ticks (after 3 to warm up), the process's CPU a tick`);
    printTable(stepRows);
  }

  // 1b. Consumer lag under a sustained feed: every pool sends one tick a second (what the
  // ingester's one-second subscriptions deliver), for SUSTAIN_SECONDS.
  if (PARTS.includes('sustained')) {
    const pools = SUSTAIN_POOLS;
    const ids = await seedPools(db, pools, 'sus');
    const setPrefix = `${prefix}sus.`;
    await createTopics(kafka, setPrefix);
    const feed = await sustainedFeed({ ...consumeOpts, prefix: setPrefix }, aggregate, ids, SUSTAIN_SECONDS);
    printTable(feed.samples);
    const drained = feed.leftAfterDrain === 0 ? `drained ${feed.drainMs} ms after the feed stopped` : `${feed.leftAfterDrain} ticks still behind ${feed.drainMs} ms after the feed stopped`;
    ratios.push(`sustained ${pools} pools (${pools} ticks/s for ${SUSTAIN_SECONDS} s): lag at most ${feed.maxLag} ticks (${(feed.maxLag / pools).toFixed(1)} s of feed), ${drained}; load average ${load()}`);
  }
  if (!PARTS.includes('gateway') && !PARTS.includes('ohlcv')) {
    console.log(ratios.map((r) => `  ${r}`).join('\n'));
    await cleanUp();
    return;
  }

  // The gateway app with the kline module, its hub fed by kline.candles.v2.
  const keys = new ApiKeyRepository(db);
  const appId = `bench-${randomBytes(3).toString('hex')}`;
  await keys.createApp(appId, 'kline bench');
  const key = generateApiKey();
  await keys.addKey(appId, key.keyId, key.secretHash, 'bench');
  const kline = klineModule({
    db,
    redis,
    contracts,
    publishPoolNotice: async () => undefined,
    logger: silent,
    registry: new Registry(),
    resolveKey: createKeyResolver((keyId) => keys.findKey(keyId)),
    market: { baseUrl: 'http://127.0.0.1:1', apiKey: '', timeoutMs: 1000 },
    bodyLimitBytes: 1024 * 1024,
    clock: systemClock,
    ws: { pingMs: 60_000, maxBufferedBytes: 64 * 1024 * 1024 },
  });
  const app = createMarketGatewayApp({ logger: silent, registry: new Registry(), timeoutMs: 15_000, modules: [kline] });
  const gw = await listen(app, 0, '127.0.0.1');
  routeUpgrades(gw.server, [kline.upgrade]);
  const gwBase = `http://127.0.0.1:${gw.address.port}`;

  if (PARTS.includes('gateway')) {
    // 2. Tick → WebSocket latency at a steady rate, vs raw Kafka produce → consume.
    const [latPool] = await seedPools(db, 1, 'cc');
    const aggConsumer = new BatchConsumer<MarketTickMessage>({ kafka, groupId: `bench-agg-${randomBytes(3).toString('hex')}`, spec: TOPICS.marketTicks, contracts, producer, handler: aggregate, logger: silent, registry: new Registry(), topicPrefix: prefix, fromBeginning: false, maxRecordsPerCall: MAX_RECORDS, partitionsConcurrently: PARTITIONS_CONCURRENTLY, onFatal: (r, e) => console.error(r, e) });
    const hubConsumer = new BatchConsumer<KlineCandlesMessage>({ kafka, groupId: `bench-hub-${randomBytes(3).toString('hex')}`, spec: TOPICS.klineCandles, contracts, producer, handler: kline.candlesHandler, logger: silent, registry: new Registry(), topicPrefix: prefix, fromBeginning: false, onFatal: (r, e) => console.error(r, e) });
    await Promise.all([aggConsumer.start(), hubConsumer.start()]);
    await new Promise((r) => setTimeout(r, 4000));
    const client = new WebSocket(`${gwBase.replace('http', 'ws')}/kline/api/v1/kline/ws`, { headers: { 'x-api-key': key.token } });
    await new Promise((r) => client.once('open', r));
    client.send(JSON.stringify({ id: '1', type: 'subscribe', data: { chain_type: 'evm', chain_id: 1, pool_address: `0xcc${'1'.padStart(40, '0')}`, intervals: ['1s'] } }));
    const sentAt = new Map<number, number>();
    const wsLat: number[] = [];
    client.on('message', (d) => {
      const m = JSON.parse(d.toString());
      if (m.type !== 'ohlcv' || m.msg !== 'ok') return;
      const at = sentAt.get(m.data.close);
      if (at !== undefined) {
        wsLat.push(Date.now() - at);
        sentAt.delete(m.data.close);
      }
    });
    const rate = 50;
    const latT0 = Math.floor(Date.now() / 1000);
    for (let i = 1; i <= rate * 5; i++) {
      // A unique close per tick: the push carrying it is that tick's.
      const t = { ...tickFor(latPool, i, latT0), pool_address: `0xcc${'1'.padStart(40, '0')}`, close: 1000 + i, high: 2000, low: 1, received_at: Date.now(), seq: i };
      sentAt.set(t.close, Date.now());
      void producer.publish(TOPICS.marketTicks, [{ value: t }]);
      await new Promise((r) => setTimeout(r, 1000 / rate));
    }
    await new Promise((r) => setTimeout(r, 2000));
    const rawLat: number[] = [];
    {
      const topic = prefix + 'raw-latency';
      const a2 = kafka.admin();
      await a2.connect();
      await a2.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
      await a2.disconnect();
      const c = kafka.consumer({ groupId: `bench-raw-${randomBytes(3).toString('hex')}` });
      await c.connect();
      await c.subscribe({ topic, fromBeginning: true });
      await c.run({ eachMessage: async ({ message }) => void rawLat.push(Date.now() - Number(message.value!.toString())) });
      await new Promise((r) => setTimeout(r, 4000));
      const p = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
      await p.connect();
      for (let i = 0; i < rate * 5; i++) {
        await p.send({ topic, acks: -1, messages: [{ value: String(Date.now()) }] });
        await new Promise((r) => setTimeout(r, 1000 / rate));
      }
      await new Promise((r) => setTimeout(r, 2000));
      await p.disconnect();
      await c.disconnect();
    }
    client.close();
    const lw = latencyStats(wsLat);
    const lr = latencyStats(rawLat);
    printTable([
      { path: 'tick → aggregator → kline.candles.v2 → hub → ws client', samples: lw.count, 'p50 ms': +lw.p50.toFixed(1), 'p99 ms': +lw.p99.toFixed(1) },
      { path: 'raw kafkajs produce → consume', samples: lr.count, 'p50 ms': +lr.p50.toFixed(1), 'p99 ms': +lr.p99.toFixed(1) },
    ]);
    ratios.push(`tick → ws latency at ${rate}/s: p50 ${lw.p50.toFixed(1)} ms, p99 ${lw.p99.toFixed(1)} ms (${(lw.p50 / lr.p50).toFixed(1)}x / ${(lw.p99 / lr.p99).toFixed(1)}x one raw Kafka hop; the path has two hops and a Postgres transaction)`);
    await Promise.all([aggConsumer.stop(), hubConsumer.stop()]);

    // 3. Fan-out: hub vs raw ws broadcast of the same frames.
    const frames = 20;
    const candle = (i: number): KlineCandlesMessage => ({ pool_id: 1, chain_type: 'evm', chain_id: 1, pool_address: `0xcc${'1'.padStart(40, '0')}`, token: 'base', updated_at: Date.now(), candles: [{ interval: '1s', open_time: latT0 + i, open: 1, high: 2, low: 0.5, close: 1.5, volume: i }] });
    const fanRows: Record<string, string | number>[] = [];
    const subscribe = { id: 's', type: 'subscribe', data: { chain_type: 'evm', chain_id: 1, pool_address: `0xcc${'1'.padStart(40, '0')}`, intervals: ['1s'] } };
    for (const n of FANOUT) {
      // Clients live in child processes (WsFleet): this process holds only the server side of
      // every connection, so 10,000 fit its file descriptor limit and the memory is the server's.
      global.gc?.();
      const mem0 = process.memoryUsage().rss;
      const hubClients = await WsFleet.connect({ url: `${gwBase.replace('http', 'ws')}/kline/api/v1/kline/ws`, headers: { 'x-api-key': key.token }, count: n, subscribe });
      const memPer = (process.memoryUsage().rss - mem0) / n;
      const hubMs = await hubClients.timeDelivery(frames, () => {
        for (let i = 0; i < frames; i++) kline.hub.deliver(candle(i));
      });
      await hubClients.close();
      // Raw ws broadcast of the same frames to as many connections.
      const wss = new WebSocketServer({ port: 0, host: '127.0.0.1', perMessageDeflate: false, backlog: 4096 });
      await new Promise((r) => wss.once('listening', r));
      const rawClients = await WsFleet.connect({ url: `ws://127.0.0.1:${(wss.address() as AddressInfo).port}`, count: n });
      const rawMs = await rawClients.timeDelivery(frames, () => {
        for (let i = 0; i < frames; i++) {
          const { candles, ...pool } = candle(i);
          const frame = JSON.stringify({ id: '', time: Date.now(), type: 'ohlcv', code: 0, data: { ...pool, ...candles[0] }, msg: 'ok' });
          for (const c of wss.clients) c.send(frame);
        }
      });
      await rawClients.close();
      await new Promise((r) => wss.close(() => r(undefined)));
      fanRows.push({ connections: n, frames, 'hub ms': +hubMs.toFixed(1), 'raw ws ms': +rawMs.toFixed(1), 'hub frames/s': Math.round(((n * frames) / hubMs) * 1000), 'server KiB per connection': +(memPer / 1024).toFixed(1) });
      ratios.push(`fan-out to ${n}: hub ${(hubMs / rawMs).toFixed(2)}x the raw ws broadcast time`);
      await new Promise((r) => setTimeout(r, 500));
    }
    printTable(fanRows);
  }

  // 4. ohlcv history: 300,000 1m candles of one pool.
  const [histPool] = await seedPools(db, 1, 'dd');
  const h0 = 1_700_000_000 - (1_700_000_000 % 60);
  await db.raw(
    `insert into kline.candles (pool_id, interval, open_time, open, high, low, close, volume, open_src, close_src_time, close_src_rank)
     select ?, '1m', ? + g * 60, 1 + g % 7, 2 + g % 7, g % 7, 1.5 + g % 7, g, ? + g * 60, ? + g * 60, 0 from generate_series(0, ?) g`,
    [histPool, h0, h0, h0, HISTORY_ROWS - 1],
  );
  await db.raw('vacuum analyze kline.candles');
  const address = `0xdd${'1'.padStart(40, '0')}`;
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  const rawServer = http.createServer(async (req, res) => {
    const q = new URL(req.url ?? '/', 'http://raw').searchParams;
    // The gateway's two statements, both on every request: the pool by address, then the
    // candles (the gateway keeps the pool a few seconds, HISTORY_POOL_AGE, so its pages
    // mostly run the second alone).
    const p = await pool.query(`select id from kline.pools where chain_type = $1 and chain_id = $2 and lower(pool_address) = lower($3) order by is_active desc, id asc limit 1`, ['evm', '1', address]);
    const { rows } = await pool.query(
      `select pool_id, interval, open_time, open, high, low, close, volume from kline.candles where pool_id = $1 and interval = $2 and open_time between $3 and $4 order by open_time asc limit $5`,
      [p.rows[0].id, '1m', Number(q.get('from')), Number(q.get('to')), Number(q.get('limit'))],
    );
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ code: 0, message: 'ok', data: rows.map((r) => ({ ...r, open_time: Number(r.open_time) })) }));
  });
  await new Promise<void>((r) => rawServer.listen(0, '127.0.0.1', r));
  const rawBase = `http://127.0.0.1:${(rawServer.address() as AddressInfo).port}`;
  const query = (from: number, limit: number) => `from=${from}&to=${h0 + HISTORY_ROWS * 60}&limit=${limit}`;
  const cases: [string, number, number][] = [
    ['5000 candles', h0, 5000],
    ['page 1 (limit 100)', h0, 100],
    ['page 1000 (limit 100)', h0 + 999 * 100 * 60, 100],
  ];
  const histRows: Record<string, string | number>[] = [];
  for (const [label, from, limit] of cases) {
    const gwUrl = `${gwBase}/kline/api/v1/kline/ohlcv?interval=1m&chain_type=evm&chain_id=1&pool_address=${address}&${query(from, limit)}`;
    const rUrl = `${rawBase}/?${query(from, limit)}`;
    const a = (await (await fetch(gwUrl, { headers: { 'x-api-key': key.token } })).json()) as any;
    const b = (await (await fetch(rUrl)).json()) as any;
    if (a.data.length !== limit || JSON.stringify(a.data) !== JSON.stringify(b.data)) throw new Error(`${label}: gateway and raw baseline disagree`);
    // The two paths alternate in rounds (the first round of each warms up): a drift of the
    // machine's load, or the page cache warming, then falls on both alike.
    const ga = { latencies: [] as number[] };
    const ra = { latencies: [] as number[] };
    const roundRatios: number[] = [];
    for (let round = 0; round < OHLCV_ROUNDS; round++) {
      const each = { concurrency: 1, durationMs: DURATION_MS / OHLCV_ROUNDS, warmupMs: round === 0 ? 500 : 0 };
      const g = (await sustained(async () => void (await (await fetch(gwUrl, { headers: { 'x-api-key': key.token } })).arrayBuffer()), each)).latencies;
      const r = (await sustained(async () => void (await (await fetch(rUrl)).arrayBuffer()), each)).latencies;
      ga.latencies.push(...g);
      ra.latencies.push(...r);
      roundRatios.push(latencyStats(g).p50 / latencyStats(r).p50);
    }
    const sa = latencyStats(ga.latencies);
    const sr = latencyStats(ra.latencies);
    histRows.push({ query: label, 'gateway p50 ms': +sa.p50.toFixed(2), 'gateway p99 ms': +sa.p99.toFixed(2), 'raw p50 ms': +sr.p50.toFixed(2), 'raw p99 ms': +sr.p99.toFixed(2) });
    ratios.push(`ohlcv ${label}: gateway/raw p50 ${(sa.p50 / sr.p50).toFixed(2)}x, p99 ${(sa.p99 / sr.p99).toFixed(2)}x; p50 ratio of each round ${roundRatios.map((x) => x.toFixed(2)).join(' ')} (median ${latencyStats(roundRatios).p50.toFixed(2)})`);
  }
  printTable(histRows);
  console.log(ratios.map((r) => `  ${r}`).join('\n'));

  rawServer.close();
  await pool.end();
  await gw.close();
  await cleanUp();
}
