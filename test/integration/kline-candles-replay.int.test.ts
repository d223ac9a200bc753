import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { Registry } from 'prom-client';
import type { KlineCandleMessage, MarketTickMessage } from '@chainpipe/contracts';
import { createDb, type Knex } from '@chainpipe/db';
import { poolKey } from '@chainpipe/kline';
import { CandleRepository, LatestCandles } from '@chainpipe/kline-store';
import { createRedis, type Redis } from '@chainpipe/redis';
import { systemClock } from '@chainpipe/runtime';
import { testEnv } from '@chainpipe/testing';
import { createTicksHandler } from '../../apps/kline-aggregator/src/ticks.handler';

/**
 * At-least-once: the consumer may hand the aggregator a batch again (a crash before the offset
 * commit). Real Postgres and Redis; the stored candles, the Redis snapshots and the published
 * candles after a replay must equal those before it, and the hand-computed values.
 */
describe('kline-aggregator: a replayed batch leaves the same candles', () => {
  const env = testEnv();
  let db: Knex;
  let redis: Redis;
  const T0 = Date.parse('2026-11-24T07:00:00Z') / 1000;
  const pools: { id: number; ref: { chain_type: string; chain_id: number; pool_address: string; token: 'base' }; scale: number }[] = [];

  before(async () => {
    db = createDb({ url: env.databaseUrl, poolMax: 2 });
    redis = createRedis({ url: env.redisUrl, keyPrefix: `${env.runId}:kline-replay:` });
    // Two pools in every batch: the second one's prices and volumes are twice the first's.
    for (const scale of [1, 2]) {
      const ref = { chain_type: 'evm', chain_id: 1, pool_address: `0x${randomBytes(20).toString('hex')}`, token: 'base' as const };
      const [{ id }] = (await db('kline.pools').insert({ ...ref, chain_id: String(ref.chain_id), network_id: 'eth', is_active: true }).returning('id')) as { id: number }[];
      pools.push({ id, ref, scale });
    }
  });

  after(async () => {
    await db('kline.pools').whereIn('id', pools.map((p) => p.id)).delete();
    await db.destroy();
    redis.disconnect();
  });

  // Per pool: second 0 gets three snapshots (volume 1 → 3 → 4, close 10 → 12 → 9), second 30 two (5 → 7, close 11 → 14).
  const snapshots: [second: number, o: number, h: number, l: number, c: number, v: number][][] = [
    [
      [0, 10, 10, 10, 10, 1],
      [0, 10, 12, 10, 12, 3],
      [0, 10, 12, 8, 9, 4],
    ],
    [
      [30, 9, 11, 9, 11, 5],
      [30, 9, 15, 7, 14, 7],
    ],
  ];
  const batch = (n: number): MarketTickMessage[] =>
    pools.flatMap(({ id, ref, scale }) =>
      snapshots[n].map(([second, o, h, l, c, v], i): MarketTickMessage => ({
        pool_id: id, ...ref, network_id: 'eth', interval: '1s', open_time: T0 + second,
        open: o * scale, high: h * scale, low: l * scale, close: c * scale, volume: v * scale,
        // Fixed receive times: the same ticks delivered again carry the same ranks.
        received_at: 1_800_000_000_000 + n * 100 + i, seq: n * 100 + i,
      })),
    );
  // Hand-computed for scale 1: 1s at 0 {10, 12, 8, 9, 4}, 1s at 30 {9, 15, 7, 14, 7}; every longer
  // candle, the roll-ups included, {10, 15, 7, 14, 11} (the final volumes of the two seconds).
  const whole = { open: 10, high: 15, low: 7, close: 14, volume: 11 };
  const expectedFor = (scale: number) => {
    const x = (c: typeof whole) => ({ open: c.open * scale, high: c.high * scale, low: c.low * scale, close: c.close * scale, volume: c.volume * scale });
    return [
      { interval: '1s', open_time: T0, ...x({ open: 10, high: 12, low: 8, close: 9, volume: 4 }) },
      { interval: '1s', open_time: T0 + 30, ...x({ open: 9, high: 15, low: 7, close: 14, volume: 7 }) },
      { interval: '1m', open_time: T0, ...x(whole) },
      { interval: '15m', open_time: T0, ...x(whole) },
      { interval: '1h', open_time: T0, ...x(whole) },
      { interval: '4h', open_time: Date.parse('2026-11-24T04:00:00Z') / 1000, ...x(whole) },
      { interval: '1d', open_time: Date.parse('2026-11-24T00:00:00Z') / 1000, ...x(whole) },
    ];
  };

  async function storedCandles(poolId: number) {
    const rows = (await db('kline.candles').where({ pool_id: poolId }).orderBy([{ column: 'interval' }, { column: 'open_time' }])
      .select('interval', 'open_time', 'open', 'high', 'low', 'close', 'volume')) as { interval: string; open_time: string }[];
    return rows.map((r) => ({ ...r, open_time: Number(r.open_time) }));
  }
  const sortCandles = <T extends { interval: string; open_time: number }>(list: T[]) => [...list].sort((a, b) => a.interval.localeCompare(b.interval) || a.open_time - b.open_time);

  it('stores, keeps in Redis and publishes the same candles when a batch comes again', async () => {
    const latest = new LatestCandles(redis);
    let published: KlineCandleMessage[] = [];
    const handler = createTicksHandler({
      candles: new CandleRepository(db),
      latest,
      registry: new Registry(),
      clock: systemClock,
      publish: async (messages) => void (published = messages.map((m) => m.value)),
    });
    const ctx = { heartbeat: async () => {}, signal: new AbortController().signal };
    const deliver = (ticks: MarketTickMessage[]) => handler(ticks.map((value) => ({ value }) as unknown as Parameters<typeof handler>[0][number]), ctx);
    const withoutTime = (list: KlineCandleMessage[]) => sortCandles(list.map(({ updated_at: _, ...c }) => c));
    // Each call stamps its candles' updated_at: the rest is what must not change.
    const redisState = async () =>
      Promise.all(pools.map(async ({ ref }) => withoutTime([...(await latest.get(poolKey(ref), ['1s', '1m', '15m', '1h', '4h', '1d', '1w', '1M', '1Y'])).values()])));

    await deliver(batch(0));
    await deliver(batch(1));
    const firstTime = withoutTime(published);
    const redisBefore = await redisState();
    for (const { id, scale } of pools) expect(await storedCandles(id), `pool ×${scale}`).to.deep.equal(sortCandles(expectedFor(scale)));
    // The second call published its pools' 1s candle at 30, every longer one and the roll-ups.
    expect(firstTime.filter((c) => c.pool_id === pools[0].id && c.interval === '1w')).to.deep.include.members([
      { pool_id: pools[0].id, ...pools[0].ref, interval: '1w', open_time: Date.parse('2026-11-23T00:00:00Z') / 1000, ...whole },
    ]);

    await deliver(batch(1));
    for (const { id, scale } of pools) expect(await storedCandles(id), `pool ×${scale}, last batch replayed`).to.deep.equal(sortCandles(expectedFor(scale)));
    expect(withoutTime(published), 'the replay publishes the same candles').to.deep.equal(firstTime);
    expect(await redisState(), 'Redis snapshots unchanged').to.deep.equal(redisBefore);

    await deliver([...batch(0), ...batch(1)]);
    for (const { id, scale } of pools) expect(await storedCandles(id), `pool ×${scale}, both replayed in one batch`).to.deep.equal(sortCandles(expectedFor(scale)));
    expect(await redisState(), 'Redis snapshots unchanged').to.deep.equal(redisBefore);
  });
});
