import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { Registry } from 'prom-client';
import type { KlineCandle, KlineCandlesMessage, MarketTickMessage } from '@chainpipe/contracts';
import { createDb, type Knex } from '@chainpipe/db';
import type { OutgoingMessage } from '@chainpipe/kafka';
import { alignOpenTime, INTERVALS, poolKey } from '@chainpipe/kline';
import { CandleRepository, LatestCandles } from '@chainpipe/kline-store';
import { createRedis, type Redis } from '@chainpipe/redis';
import { NonRetryableError } from '@chainpipe/runtime';
import { randomIndex, seededRandom, testEnv } from '@chainpipe/testing';
import { MAX_CANDLES_PER_RECORD, type TicksHandlerDeps } from '../../apps/kline-aggregator/src/ticks.handler';
import { SECONDS_RETENTION, aggregatorOn, clockAt, handleTicks, registerPool, removePool } from './kline-support';

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
  /** The suite runs an hour after its ticks: well within the 1s retention. */
  const suiteClock = clockAt(T0 + 3600);
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
      { interval: '1w', open_time: Date.parse('2026-11-23T00:00:00Z') / 1000, ...x(whole) },
      { interval: '1M', open_time: Date.parse('2026-11-01T00:00:00Z') / 1000, ...x(whole) },
      { interval: '1Y', open_time: Date.parse('2026-01-01T00:00:00Z') / 1000, ...x(whole) },
    ];
  };

  const sortCandles = <T extends { interval: string; open_time: number }>(list: T[]) => [...list].sort((a, b) => a.interval.localeCompare(b.interval) || a.open_time - b.open_time);
  async function storedCandles(poolId: number) {
    const rows = (await db('kline.candles').where({ pool_id: poolId }).orderBy([{ column: 'interval' }, { column: 'open_time' }])
      .select('interval', 'open_time', 'open', 'high', 'low', 'close', 'volume')) as { interval: string; open_time: string }[];
    return sortCandles(rows.map((r) => ({ ...r, open_time: Number(r.open_time) })));
  }
  /** A kline.candles.v2 record's candles, each with its pool (the shape of the Redis snapshot). */
  const flatten = ({ candles, ...head }: KlineCandlesMessage): KlineCandle[] => candles.map((c) => ({ ...head, ...c }));

  it('stores, keeps in Redis and publishes the same candles when a batch comes again', async () => {
    const latest = new LatestCandles(redis);
    let published: KlineCandle[] = [];
    const handler = aggregatorOn(db, latest, async (messages) => void (published = messages.flatMap((m) => flatten(m.value))), { clock: suiteClock });
    const deliver = (ticks: MarketTickMessage[]) => handleTicks(handler, ticks);
    const withoutTime = (list: KlineCandle[]) => sortCandles(list.map(({ updated_at: _, ...c }) => c));
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

  /** The aggregator's handler on this suite's stores, publishing to `publish` (nowhere by default). */
  const suiteHandler = (publish?: TicksHandlerDeps['publish']) => aggregatorOn(db, new LatestCandles(redis), publish, { clock: suiteClock });

  it('a whole minute backfilled in the same call as its seconds holds its own volume, the seconds not added on top (D189)', async () => {
    // The live feed heard seconds 0 and 30 of the minute (volumes 4 and 7); the stream was cut at
    // 45, and the REST OHLCV's whole minute (volume 20, its close from second 45) came after them.
    const oneCall = await registerPool(db);
    const twoCalls = await registerPool(db);
    try {
      const ticksOf = (poolId: number) => {
        const t = (interval: '1s' | '1m', second: number, o: number, h: number, l: number, c: number, v: number, n: number): MarketTickMessage => ({
          pool_id: poolId, chain_type: 'evm', chain_id: 1, pool_address: '0x00', token: 'base', network_id: 'eth', interval, open_time: T0 + second,
          open: o, high: h, low: l, close: c, volume: v, received_at: 1_800_000_000_000 + n, seq: n,
        });
        return { seconds: [t('1s', 0, 10, 12, 8, 9, 4, 1), t('1s', 30, 9, 15, 7, 14, 7, 2)], minute: [t('1m', 0, 10, 16, 7, 13, 20, 3)] };
      };
      const handler = suiteHandler();
      const a = ticksOf(oneCall);
      await handleTicks(handler, [...a.seconds, ...a.minute]);
      const b = ticksOf(twoCalls);
      await handleTicks(handler, b.seconds);
      await handleTicks(handler, b.minute);
      const minute = { open: 10, high: 16, low: 7, close: 13, volume: 20 };
      const longer = async (poolId: number) =>
        ((await storedCandles(poolId)) as unknown as { interval: string; open: number; high: number; low: number; close: number; volume: number }[])
          .filter((c) => c.interval !== '1s')
          .map(({ interval, open, high, low, close, volume }) => ({ interval, open, high, low, close, volume }))
          .sort((x, y) => (x.interval < y.interval ? -1 : 1));
      const expected = ['15m', '1M', '1Y', '1d', '1h', '1m', '1w', '4h'].map((interval) => ({ interval, ...minute }));
      expect(await longer(oneCall), 'seconds and minute in one call').to.deep.equal(expected);
      expect(await longer(twoCalls), 'seconds, then the minute').to.deep.equal(expected);
      // The same call again changes nothing.
      await handleTicks(handler, [...a.seconds, ...a.minute]);
      expect(await longer(oneCall), 'the call replayed').to.deep.equal(expected);
    } finally {
      await removePool(db, oneCall);
      await removePool(db, twoCalls);
    }
  });

  it('dead-letters a tick naming no registered pool and stores the rest of its call', async () => {
    const handler = suiteHandler();
    const [{ max }] = (await db('kline.pools').max<{ max: number }[]>({ max: 'id' })) as { max: number }[];
    const good = [...batch(0), ...batch(1)];
    const stray: MarketTickMessage = { ...good[0], pool_id: max + 1000 };
    const result = await handleTicks(handler, [...good, stray]);
    expect(result?.deadLetters?.map((d) => [d.record.offset, d.code])).to.deep.equal([[String(good.length), 'STORE_REJECTED']]);
    for (const { id, scale } of pools) expect(await storedCandles(id), `pool ×${scale}`).to.deep.equal(sortCandles(expectedFor(scale)));
  });

  it('cuts the candles of a pool in one call into records of at most MAX_CANDLES_PER_RECORD', async () => {
    const [{ id, ref }] = pools;
    const published: OutgoingMessage<KlineCandlesMessage>[] = [];
    const handler = suiteHandler(async (messages) => void published.push(...messages));
    // 620 new seconds of one pool a day later: 620 1s candles and their 11 minutes, 1 quarter
    // hour, 1 hour, 1 four-hour, 1 day, 1 week, 1 month and 1 year candles in one call.
    const start = T0 + 86_400;
    const ticks = Array.from({ length: 620 }, (_, s): MarketTickMessage => ({
      pool_id: id, ...ref, network_id: 'eth', interval: '1s', open_time: start + s,
      open: 1, high: 2, low: 0.5, close: 1.5, volume: s + 1, received_at: 1_800_000_100_000 + s, seq: s,
    }));
    await handleTicks(handler, ticks);
    const expectedCount = 620 + 11 + 1 + 1 + 1 + 1 + 1 + 1 + 1;
    expect(published.map((m) => m.value.candles.length)).to.deep.equal([MAX_CANDLES_PER_RECORD, expectedCount - MAX_CANDLES_PER_RECORD]);
    const sent = sortCandles(published.flatMap((m) => m.value.candles));
    const stored = (await storedCandles(id)).filter((c) => c.open_time >= alignOpenTime(c.interval as (typeof INTERVALS)[number], start));
    expect(sent).to.deep.equal(stored);
  });

  it('refuses a call whose values no candle column can hold, as never to succeed, and stores none of it', async () => {
    const handler = suiteHandler();
    const before = await Promise.all(pools.map((p) => storedCandles(p.id)));
    // A receive time far past any clock: the update's rank (ms × 1000) is no exact integer any more.
    const tick: MarketTickMessage = { ...batch(1)[0], open_time: T0 + 45, received_at: 1e16 };
    let refused: unknown;
    await handleTicks(handler, [tick]).catch((err: unknown) => (refused = err));
    expect(refused).to.be.instanceOf(NonRetryableError);
    expect(refused).to.have.property('code', 'STORE_REJECTED');
    expect(await Promise.all(pools.map((p) => storedCandles(p.id)))).to.deep.equal(before);
  });
});

/**
 * The aggregator folds a whole consumer call (many pools, many ticks of each) into one
 * transaction and one kline.candles.v2 record per pool. Ticks of 20 pools around a new year
 * (every interval's boundary), in a seeded shuffle, stored in calls of one size; then the same
 * ticks replayed as one call and in calls of another size (a consumer restarted with another
 * KLINE_AGGREGATOR_MAX_RECORDS_PER_CALL replays other chunk boundaries). Stored, published and
 * Redis candles are compared with candles computed here from the ticks by the merge rules.
 */
describe('kline-aggregator: a replay in other chunks leaves the same candles', () => {
  const env = testEnv();
  let db: Knex;
  let redis: Redis;
  const NEW_YEAR = Date.parse('2027-01-01T00:00:00Z') / 1000;
  const SECONDS = Array.from({ length: 20 }, (_, i) => i - 10);
  const pools: { id: number; ref: { chain_type: string; chain_id: number; pool_address: string; token: 'base' } }[] = [];

  before(async () => {
    db = createDb({ url: env.databaseUrl, poolMax: 2 });
    redis = createRedis({ url: env.redisUrl, keyPrefix: `${env.runId}:kline-rechunk:` });
    for (let p = 0; p < 20; p++) {
      const ref = { chain_type: 'evm', chain_id: 1, pool_address: `0x${randomBytes(20).toString('hex')}`, token: 'base' as const };
      const [{ id }] = (await db('kline.pools').insert({ ...ref, chain_id: String(ref.chain_id), network_id: 'eth', is_active: true }).returning('id')) as { id: number }[];
      pools.push({ id, ref });
    }
  });

  after(async () => {
    await db('kline.pools').whereIn('id', pools.map((p) => p.id)).delete();
    await db.destroy();
    redis.disconnect();
  });

  // Three snapshots of each second of each pool: the open fixed, high/low widening, volume
  // growing, the close of the newest snapshot (by receive rank) 0.2 above the open.
  const CLOSE_STEP = [0.3, 0.1, 0.2];
  const allTicks = (): MarketTickMessage[] =>
    pools.flatMap(({ id, ref }, p) =>
      SECONDS.flatMap((s) =>
        [0, 1, 2].map((j): MarketTickMessage => {
          const base = 100 + s * 0.5 + p;
          return {
            pool_id: id, ...ref, network_id: 'eth', interval: '1s', open_time: NEW_YEAR + s,
            open: base, high: base + 1 + j, low: base - 1 - j, close: base + CLOSE_STEP[j], volume: (s + 11) * (j + 1) * (p + 1),
            received_at: 1_800_000_000_000 + (s + 10) * 1000 + j, seq: j,
          };
        }),
      ),
    );

  /** The candles the merge rules give for `list`: 1s per second, every longer one from its seconds. */
  function expectedCandles(list: MarketTickMessage[]): Map<string, KlineCandle> {
    const seconds = new Map<string, { tick: MarketTickMessage; open: number; high: number; low: number; close: number; volume: number; rank: number }>();
    for (const t of list) {
      const id = `${t.pool_id}|${t.open_time}`;
      const rank = t.received_at * 1000 + t.seq;
      const cur = seconds.get(id);
      if (!cur) {
        seconds.set(id, { tick: t, open: t.open!, high: t.high!, low: t.low!, close: t.close!, volume: t.volume!, rank });
        continue;
      }
      cur.high = Math.max(cur.high, t.high!);
      cur.low = Math.min(cur.low, t.low!);
      cur.volume = Math.max(cur.volume, t.volume!);
      if (rank > cur.rank) [cur.close, cur.rank] = [t.close!, rank];
    }
    const out = new Map<string, KlineCandle>();
    const ordered = [...seconds.values()].sort((a, b) => a.tick.open_time - b.tick.open_time);
    for (const sec of ordered) {
      const { pool_id, chain_type, chain_id, pool_address, token, open_time } = sec.tick;
      for (const interval of INTERVALS) {
        const start = alignOpenTime(interval, open_time);
        const id = `${pool_id}|${interval}|${start}`;
        const c = out.get(id);
        if (!c) {
          out.set(id, { pool_id, chain_type, chain_id, pool_address, token, updated_at: 0, interval, open_time: start, open: sec.open, high: sec.high, low: sec.low, close: sec.close, volume: sec.volume });
          continue;
        }
        c.high = Math.max(c.high as number, sec.high);
        c.low = Math.min(c.low as number, sec.low);
        c.close = sec.close;
        c.volume = (c.volume as number) + sec.volume;
      }
    }
    return out;
  }

  const keyOf = (c: { pool_id: number; interval: string; open_time: number }) => `${c.pool_id}|${c.interval}|${c.open_time}`;
  const withoutTime = ({ updated_at: _, ...c }: KlineCandle) => c;

  async function stored(): Promise<Map<string, unknown>> {
    const rows = (await db('kline.candles').whereIn('pool_id', pools.map((p) => p.id)).select('pool_id', 'interval', 'open_time', 'open', 'high', 'low', 'close', 'volume')) as { pool_id: number; interval: string; open_time: string }[];
    return new Map(rows.map((r) => [keyOf({ ...r, open_time: Number(r.open_time) }), { ...r, open_time: Number(r.open_time) }]));
  }

  it('stores, publishes and keeps in Redis the candles of the ticks, however the calls are cut and replayed', async () => {
    const rnd = seededRandom(30);
    const shuffled = allTicks();
    for (let i = shuffled.length - 1; i > 0; i--) {
      const j = randomIndex(rnd, i + 1);
      [shuffled[i], shuffled[j]] = [shuffled[j], shuffled[i]];
    }
    const expected = expectedCandles(shuffled);
    const expectedStored = new Map([...expected].map(([k, c]) => {
      const { pool_id, interval, open_time, open, high, low, close, volume } = c;
      return [k, { pool_id, interval, open_time, open, high, low, close, volume }];
    }));
    const latest = new LatestCandles(redis);
    let records: KlineCandlesMessage[] = [];
    const handler = aggregatorOn(db, latest, async (m) => void records.push(...m.map((x) => x.value)));
    /** Delivers `list` in calls of `size`; returns every candle published, the last version of each. */
    const deliver = async (list: MarketTickMessage[], size: number) => {
      const lastPublished = new Map<string, KlineCandle>();
      for (let i = 0; i < list.length; i += size) {
        records = [];
        const call = list.slice(i, i + size);
        await handleTicks(handler, call);
        const poolsInCall = new Set(call.map((t) => t.pool_id));
        expect(records.map((r) => r.pool_id).sort(), 'one record per pool of the call').to.deep.equal([...poolsInCall].sort());
        for (const { candles, ...head } of records) {
          const keys = candles.map((c) => `${c.interval}|${c.open_time}`);
          expect(new Set(keys).size, 'each candle once in its record').to.equal(keys.length);
          for (const c of candles) lastPublished.set(keyOf({ ...head, ...c }), { ...head, ...c });
        }
      }
      return lastPublished;
    };
    const redisSnapshot = async () => {
      const out = new Map<string, unknown>();
      for (const { ref } of pools) for (const [interval, c] of await latest.get(poolKey(ref), [...INTERVALS])) out.set(`${poolKey(ref)}|${interval}`, withoutTime(c));
      return out;
    };
    const newestExpected = new Map<string, unknown>();
    for (const c of [...expected.values()].sort((a, b) => a.open_time - b.open_time)) newestExpected.set(`${poolKey(c)}|${c.interval}`, withoutTime(c));

    const first = await deliver(shuffled, 97);
    expect(await stored(), 'stored after calls of 97').to.deep.equal(expectedStored);
    expect(new Map([...first].map(([k, c]) => [k, withoutTime(c)])), 'published after calls of 97').to.deep.equal(new Map([...expected].map(([k, c]) => [k, withoutTime(c)])));
    expect(await redisSnapshot(), 'Redis holds the newest candle of each interval').to.deep.equal(newestExpected);

    const again = await deliver(shuffled, shuffled.length);
    expect(await stored(), 'stored after the whole replay in one call').to.deep.equal(expectedStored);
    expect(new Map([...again].map(([k, c]) => [k, withoutTime(c)])), 'the replay publishes every candle as stored').to.deep.equal(new Map([...expected].map(([k, c]) => [k, withoutTime(c)])));

    await deliver([...shuffled].reverse(), 251);
    expect(await stored(), 'stored after a replay in calls of 251, reversed').to.deep.equal(expectedStored);
    expect(await redisSnapshot(), 'Redis unchanged by the replays').to.deep.equal(newestExpected);
  });
});

describe('kline candles: two writers of one pool (a rebalance, a restart)', () => {
  const env = testEnv();
  let db: Knex;
  let poolId: number;
  const T0 = Date.parse('2026-11-24T09:00:00Z') / 1000;

  beforeEach(async () => {
    db = createDb({ url: env.databaseUrl, poolMax: 4 });
    poolId = await registerPool(db);
  });

  afterEach(async () => {
    await removePool(db, poolId);
    await db.destroy();
  });

  const snapshot = (rank: number, high: number, low: number, close: number, volume: number) => [{ pool_id: poolId, interval: '1s' as const, open_time: T0, open: 10, high, low, close, volume, rank }];
  const storedRows = async () => (await db('kline.candles').where({ pool_id: poolId }).select('interval', 'open', 'high', 'low', 'close', 'volume')) as { interval: string }[];

  it('two processes inserting one new candle at once: both calls succeed, the candle merges both', async () => {
    // Two repositories are two aggregator processes, each with its own record of what it wrote.
    const [first, second] = [new CandleRepository(db), new CandleRepository(db)];
    const a = snapshot(1, 12, 9, 11, 4);
    const b = snapshot(2, 15, 8, 14, 6);
    // Both write while a lock held here keeps them waiting, so that neither sees the other's rows.
    const gate = await db.transaction();
    await gate.raw('lock table kline.candles in exclusive mode');
    const both = Promise.allSettled([first.applyUpdates(a), second.applyUpdates(b)]);
    for (let waiting = 0; waiting < 2; await new Promise((r) => setTimeout(r, 10))) {
      ({ rows: [{ waiting }] } = await db.raw<{ rows: { waiting: number }[] }>(`select count(*)::int as waiting from pg_locks where relation = 'kline.candles'::regclass and not granted`));
    }
    await gate.commit();
    const results = await both;
    expect(results.map((r) => r.status), 'the later insert fails, and its call merges under lock instead').to.deep.equal(['fulfilled', 'fulfilled']);
    // Hand-computed, whichever came first: the extremes 15 / 8, the close of the later snapshot
    // (rank 2), the larger volume; every longer candle the same, its volume grown to 6 in all.
    const rows = await storedRows();
    expect(rows.map((r) => r.interval).sort()).to.deep.equal(['15m', '1M', '1Y', '1d', '1h', '1m', '1s', '1w', '4h']);
    for (const r of rows) expect(r, r.interval).to.deep.include({ open: 10, high: 15, low: 8, close: 14, volume: 6 });
  });

  it('a process writing on what it wrote before finds the rows changed by another since, and merges on them', async () => {
    const registry = new Registry();
    const rereads = async () => (await registry.getSingleMetric('chainpipe_kline_candle_rereads_total')!.get()).values[0]?.value ?? 0;
    const [before, after] = [new CandleRepository(db, { registry }), new CandleRepository(db)];
    // The partition's first owner writes the second; a second owner (after a rebalance) writes a
    // later snapshot of it; then the first owner, which still has its own write on record, gets
    // the partition back and writes a third.
    await before.applyUpdates(snapshot(1, 12, 9, 11, 4));
    expect(await rereads(), 'new candles: written without reading').to.equal(0);
    const moved = [...(await after.applyUpdates(snapshot(2, 15, 8, 14, 6))).values()].flat();
    expect(moved.find((c) => c.interval === '1h'), 'the second owner merged on the stored candle').to.deep.include({ high: 15, low: 8, close: 14, volume: 6 });
    const back = [...(await before.applyUpdates(snapshot(3, 13, 9.5, 12, 7))).values()].flat();
    expect(await rereads(), 'its remembered versions were stale: read under lock and written again').to.equal(1);
    // Hand-computed: extremes 15 / 8 (of the second owner's write), the close of rank 3, the
    // largest volume 7; the longer candles grew by the base's growth, 4 → 6 → 7.
    const rows = await storedRows();
    expect(rows).to.have.length(9);
    for (const r of rows) expect(r, r.interval).to.deep.include({ open: 10, high: 15, low: 8, close: 12, volume: 7 });
    for (const c of back) expect(c, `returned ${c.interval}`).to.deep.include({ open: 10, high: 15, low: 8, close: 12, volume: 7 });
    // And its next write, on what it has now written, needs no reading.
    await before.applyUpdates(snapshot(4, 16, 9, 12.5, 9));
    expect(await rereads()).to.equal(1);
    for (const r of await storedRows()) expect(r, r.interval).to.deep.include({ open: 10, high: 16, low: 8, close: 12.5, volume: 9 });
  });

  it('a replay of a second past the 1s retention changes no volume, whether the retention has deleted its candle or not', async () => {
    const redis = createRedis({ url: env.redisUrl, keyPrefix: `${env.runId}:kline-past-retention:` });
    const registry = new Registry();
    const refused = async () => (await registry.getSingleMetric('chainpipe_kline_ticks_past_retention_total')!.get()).values[0]?.value ?? 0;
    const [{ pool_address }] = (await db('kline.pools').where({ id: poolId }).select('pool_address')) as { pool_address: string }[];
    let now = T0 + 10;
    const handler = aggregatorOn(db, new LatestCandles(redis), undefined, { clock: { now: () => now * 1000 }, registry });
    const tick = (seq: number, high: number, low: number, close: number, volume: number): MarketTickMessage => ({
      pool_id: poolId, chain_type: 'evm', chain_id: 1, pool_address, token: 'base', network_id: 'eth', interval: '1s', open_time: T0,
      open: 10, high, low, close, volume, received_at: 1_800_000_000_000 + seq, seq,
    });
    // The feed's second at T0: volume 4, delivered in its time. Every candle it feeds: volume 4.
    const delivered = tick(1, 12, 9, 11, 4);
    try {
      await handleTicks(handler, [delivered]);
      const inTime = await storedRows();
      expect(inTime.map((r) => r.interval).sort()).to.deep.equal(['15m', '1M', '1Y', '1d', '1h', '1m', '1s', '1w', '4h']);
      for (const r of inTime) expect(r, r.interval).to.deep.include({ open: 10, high: 12, low: 9, close: 11, volume: 4 });

      // A day later the same tick comes again (an operator replay, a consumer reset), and a later
      // snapshot of that second arrives late: both past the retention, refused, whether the 1s
      // candle is still stored (the retention has not run yet) or not.
      now = T0 + SECONDS_RETENTION + 1;
      await handleTicks(handler, [delivered, tick(2, 15, 8, 14, 6)]);
      expect(await storedRows(), 'the 1s candle still stored').to.deep.equal(inTime);
      await db('kline.candles').where({ pool_id: poolId, interval: '1s' }).delete();
      await handleTicks(handler, [delivered]);
      await handleTicks(handler, [tick(2, 15, 8, 14, 6)]);
      const after = await storedRows();
      expect(after.map((r) => r.interval).sort(), 'the deleted 1s candle is not written again').to.deep.equal(['15m', '1M', '1Y', '1d', '1h', '1m', '1w', '4h']);
      // The feed's volume of that second as delivered (4), not 4 + the replay's 4 or 6.
      for (const r of after) expect(r, r.interval).to.deep.include({ open: 10, high: 12, low: 9, close: 11, volume: 4 });
      expect(await refused(), 'each refused tick counted').to.equal(4);
    } finally {
      redis.disconnect();
    }
  });
});
