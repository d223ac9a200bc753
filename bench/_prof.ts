import { randomBytes } from 'node:crypto';
import { Registry } from 'prom-client';
import { TOPICS, loadContracts } from '@chainpipe/contracts';
import { createDb, ensureDatabase, migrateLatest } from '@chainpipe/db';
import { TopicProducer, createKafka, ensureTopics } from '@chainpipe/kafka';
import { CandleRepository, LatestCandles } from '@chainpipe/kline-store';
import { createRedis } from '@chainpipe/redis';
import { createLogger } from '@chainpipe/runtime';
import { createTicksHandler } from '../apps/kline-aggregator/src/ticks.handler';

async function main() {
  const url = 'postgres://postgres@127.0.0.1:5432/chainpipe_bench_kline';
  await ensureDatabase(url);
  const db = createDb({ url, poolMax: 10 });
  await migrateLatest(db);
  await db.raw('truncate kline.candles, kline.pools restart identity cascade');
  const { rows } = await db.raw(`insert into kline.pools (chain_type, chain_id, network_id, pool_address, token, is_active) select 'evm', 1, 'eth', '0xaa' || lpad(g::text, 40, '0'), 'base', true from generate_series(1, 100) g returning id`);
  const ids = rows.map((r: any) => r.id);
  const silent = createLogger({ name: 'p', level: 'warn' });
  const kafka = createKafka({ brokers: ['127.0.0.1:20692'], clientId: 'p', logger: silent });
  const prefix = `prof-${randomBytes(3).toString('hex')}.`;
  const admin = kafka.admin(); await admin.connect(); await ensureTopics(admin, [TOPICS.klineCandles], { prefix }); await admin.disconnect();
  const producer = new TopicProducer({ kafka, contracts: loadContracts(), logger: silent, registry: new Registry(), topicPrefix: prefix });
  await producer.connect();
  const redis = createRedis({ url: 'redis://127.0.0.1:6379/6', keyPrefix: 'prof:' });
  const candles = new CandleRepository(db);
  const latest = new LatestCandles(redis);
  const t: Record<string, number> = { apply: 0, rollups: 0, publish: 0, latest: 0, total: 0 };
  const time = <A extends unknown[], R>(name: string, f: (...a: A) => Promise<R>) => async (...a: A) => { const s = performance.now(); try { return await f(...a); } finally { t[name] += performance.now() - s; } };
  const handler = createTicksHandler({
    candles: { applyUpdates: time('apply', (u) => candles.applyUpdates(u)), rollupsOf: time('rollups', (d) => candles.rollupsOf(d)) },
    latest: { put: time('latest', (k, l) => latest.put(k, l)) },
    publish: time('publish', (m) => producer.publish(TOPICS.klineCandles, m)),
    registry: new Registry(), now: Date.now,
  });
  const t0 = Math.floor(Date.now() / 1000) - 3600;
  const N = 10_000;
  const ticks = Array.from({ length: N }, (_, i) => { const j = Math.floor(i / 100); const price = 100 + Math.sin(j) * 5; return { pool_id: ids[i % 100], chain_type: 'evm', chain_id: 1, network_id: 'eth', pool_address: `0xpool${ids[i % 100]}`, token: 'base', interval: '1s', open_time: t0 + Math.floor(j / 4), open: 100, high: price + 1, low: price - 1, close: price, volume: j, received_at: Date.now(), seq: j }; });
  const s = performance.now();
  for (let i = 0; i < N; i += 500) await handler(ticks.slice(i, i + 500).map((value, k) => ({ topic: 'x', partition: 0, offset: String(i + k), key: null, value, headers: {}, timestamp: '0' })) as never, { heartbeat: async () => undefined, signal: new AbortController().signal });
  t.total = performance.now() - s;
  console.log(JSON.stringify(Object.fromEntries(Object.entries(t).map(([k, v]) => [k, Math.round(v)]))), 'ticks/s', Math.round(N / (t.total / 1000)));
  await producer.disconnect(); redis.disconnect(); await db.destroy();
}
main();
