import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import type { KlineCandle } from '@chainpipe/contracts';
import { candlesHead, candlesMessage, poolKey, type CandlesHead, type CandleValues, type Interval } from '@chainpipe/kline';
import { LatestCandles } from '@chainpipe/kline-store';
import { createRedis, type Redis } from '@chainpipe/redis';
import { testEnv } from '@chainpipe/testing';

/**
 * The latest candle per pool and interval in Redis (the WebSocket snapshot), against real Redis:
 * a candle replaces the stored one of its interval unless that one opens later; many pools go in
 * one call of the script; each stored value is the candle with its pool, as a client reads it.
 */
describe('latest candles in Redis', () => {
  const env = testEnv();
  let redis: Redis;
  let latest: LatestCandles;

  before(() => {
    redis = createRedis({ url: env.redisUrl, keyPrefix: `${env.runId}:kline-latest:` });
    latest = new LatestCandles(redis);
  });

  after(() => redis.disconnect());

  const newPool = (overrides: Partial<{ pool_address: string; chain_type: string }> = {}) => ({
    chain_type: 'evm',
    chain_id: 56,
    pool_address: `0x${randomBytes(20).toString('hex')}`,
    token: 'base' as const,
    ...overrides,
  });
  const candle = (interval: Interval, open_time: number, close: number): CandleValues => ({ interval, open_time, open: 1, high: Math.max(2, close), low: 0.5, close, volume: close * 10 });
  // Each pool's candles as the aggregator publishes them: one kline.candles.v2 record and its JSON.
  const recordOf = (head: CandlesHead, candles: CandleValues[]) => {
    const value = candlesMessage(head, candles);
    return { value, json: JSON.stringify(value) };
  };
  const put = (pools: { pool: ReturnType<typeof newPool>; id: number; candles: CandleValues[] }[], updatedAt = 1_700_000_000_000) =>
    latest.putMany(pools.map(({ pool, id, candles }) => ({ key: poolKey(pool), records: [recordOf(candlesHead(id, pool, updatedAt), candles)] })));
  const read = async (pool: ReturnType<typeof newPool>, intervals: Interval[]) => latest.get(poolKey(pool), intervals);

  it('keeps every interval of a pool, each value the candle with its pool as a client reads it', async () => {
    const pool = newPool();
    const candles = [candle('1s', 1_800_000_001, 3), candle('1m', 1_800_000_000, 4), candle('1d', 1_799_971_200, 5), candle('1Y', 1_798_761_600, 6)];
    await put([{ pool, id: 7, candles }]);
    const got = await read(pool, ['1s', '1m', '1d', '1Y', '1h']);
    expect([...got.keys()].sort()).to.deep.equal(['1Y', '1d', '1m', '1s']);
    const expected: KlineCandle = { pool_id: 7, ...pool, updated_at: 1_700_000_000_000, ...candles[1] };
    expect(got.get('1m')).to.deep.equal(expected);
    expect(JSON.stringify(got.get('1m')), 'the stored JSON has the fields in the order of KlineCandle').to.equal(JSON.stringify(expected));
  });

  it('replaces a candle by one of the same or a later open time and never by an earlier one', async () => {
    const pool = newPool();
    await put([{ pool, id: 1, candles: [candle('1s', 1_800_000_010, 1), candle('1m', 1_800_000_000, 1), candle('15m', 1_799_999_100, 1)] }]);
    // One call: 1s late (earlier open), 1m the same candle later (same open), 15m the next one.
    await put([{ pool, id: 1, candles: [candle('1s', 1_800_000_009, 2), candle('1m', 1_800_000_000, 2), candle('15m', 1_800_000_000, 2)] }]);
    const got = await read(pool, ['1s', '1m', '15m']);
    expect(got.get('1s')).to.include({ open_time: 1_800_000_010, close: 1 });
    expect(got.get('1m')).to.include({ open_time: 1_800_000_000, close: 2 });
    expect(got.get('15m')).to.include({ open_time: 1_800_000_000, close: 2 });
  });

  it('of two candles of one interval in a call, keeps the later one, whatever their order', async () => {
    const pool = newPool();
    await put([{ pool, id: 2, candles: [candle('1s', 1_800_000_021, 21), candle('1s', 1_800_000_020, 20), candle('1m', 1_800_000_000, 5)] }]);
    const got = await read(pool, ['1s', '1m']);
    expect(got.get('1s')).to.include({ open_time: 1_800_000_021, close: 21 });
    expect(got.get('1m')).to.include({ close: 5 });
  });

  it('stores the pools of a call of many script calls, each under its own key', async () => {
    // 250 pools: more than one script call's worth, the last one partial.
    const pools = Array.from({ length: 250 }, (_, i) => ({ pool: newPool(), id: 1000 + i, candles: [candle('1s', 1_800_000_000 + i, i), candle('4h', 1_799_992_000, i + 0.5)] }));
    await put(pools);
    for (const { pool, id } of [pools[0], pools[99], pools[100], pools[249]]) {
      const got = await read(pool, ['1s', '4h']);
      expect(got.get('1s'), `pool ${id}`).to.include({ pool_id: id, pool_address: pool.pool_address, open_time: 1_800_000_000 + id - 1000, close: id - 1000 });
      expect(got.get('4h'), `pool ${id}`).to.include({ pool_id: id, close: id - 1000 + 0.5 });
    }
  });

  it('reads the open times right whatever the pool fields hold (quotes, newlines, braces, the field names themselves)', async () => {
    const pool = newPool({ pool_address: 'Ab"interval":"1s","open_time":9999999999\n,"x"},{', chain_type: 'svm\n","candles":[{"interval":"1m","open_time":1' });
    await put([{ pool, id: 3, candles: [candle('1s', 1_800_000_050, 1), candle('1m', 1_800_000_000, 1)] }]);
    await put([{ pool, id: 3, candles: [candle('1s', 1_800_000_049, 2), candle('1m', 1_800_000_060, 2)] }]);
    const got = await read(pool, ['1s', '1m']);
    expect(got.get('1s')).to.include({ open_time: 1_800_000_050, close: 1, pool_address: pool.pool_address, chain_type: pool.chain_type });
    expect(got.get('1m')).to.include({ open_time: 1_800_000_060, close: 2 });
  });

  it("takes a pool's several records in order, the later ones compared with what the earlier stored", async () => {
    const pool = newPool();
    const head = candlesHead(5, pool, 1_700_000_000_000);
    const first = [candle('1s', 1_800_000_001, 1), candle('1m', 1_800_000_000, 1)];
    const second = [candle('1s', 1_800_000_000, 2), candle('1s', 1_800_000_002, 3)];
    await latest.putMany([{ key: poolKey(pool), records: [first, second].map((candles) => recordOf(head, candles)) }]);
    const got = await read(pool, ['1s', '1m']);
    expect(got.get('1s')).to.include({ open_time: 1_800_000_002, close: 3 });
    expect(got.get('1m')).to.include({ open_time: 1_800_000_000, close: 1 });
  });

  it('puts the candles of one pool given with their pool fields', async () => {
    const pool = newPool();
    const candles = [candle('1h', 1_800_000_000, 7), candle('1d', 1_799_971_200, 8)].map((c): KlineCandle => ({ pool_id: 9, ...pool, updated_at: 1_700_000_000_001, ...c }));
    await latest.put(poolKey(pool), candles);
    const got = await read(pool, ['1h', '1d']);
    expect(got.get('1h')).to.deep.equal(candles[0]);
    expect(JSON.stringify(got.get('1d'))).to.equal(JSON.stringify(candles[1]));
  });

  it('reads the whole candles stored before the pool part had a field of its own, beside the newer ones', async () => {
    const pool = newPool();
    const key = `kline:latest:${poolKey(pool)}`;
    const old: KlineCandle = { pool_id: 6, ...pool, updated_at: 1_699_000_000_000, ...candle('1h', 1_799_996_400, 3) };
    await redis.hset(key, '1h', JSON.stringify(old));
    await put([{ pool, id: 6, candles: [candle('1m', 1_800_000_000, 4)] }]);
    const got = await read(pool, ['1h', '1m']);
    expect(got.get('1h')).to.deep.equal(old);
    expect(got.get('1m')).to.deep.include({ pool_id: 6, updated_at: 1_700_000_000_000, close: 4 });
    await put([{ pool, id: 6, candles: [candle('1h', 1_799_996_400, 5)] }]);
    expect((await read(pool, ['1h'])).get('1h'), 'replaced as any other').to.deep.include({ close: 5, updated_at: 1_700_000_000_000 });
  });

  it('leaves the snapshot as it was for a record older in every interval (a replay)', async () => {
    const pool = newPool();
    await put([{ pool, id: 8, candles: [candle('1s', 1_800_000_002, 2), candle('1m', 1_800_000_000, 2)] }], 1_700_000_000_002);
    await put([{ pool, id: 8, candles: [candle('1s', 1_800_000_001, 1), candle('1m', 1_799_999_940, 1)] }], 1_700_000_000_001);
    const got = await read(pool, ['1s', '1m']);
    expect(got.get('1s')).to.include({ open_time: 1_800_000_002, close: 2, updated_at: 1_700_000_000_002 });
    expect(got.get('1m')).to.include({ open_time: 1_800_000_000, close: 2, updated_at: 1_700_000_000_002 });
  });

  it('reads a candle an aggregator of the earlier kind wrote during a roll where it is the newer one', async () => {
    const pool = newPool();
    const key = `kline:latest:${poolKey(pool)}`;
    await put([{ pool, id: 11, candles: [candle('1s', 1_800_000_001, 1), candle('1m', 1_800_000_000, 1)] }]);
    // The earlier kind: the pool's part in `_head`, each interval's candle without it in a field of its own.
    const later = JSON.stringify(candlesMessage(candlesHead(11, pool, 1_700_000_000_005), [candle('1s', 1_800_000_002, 2)]));
    const at = later.indexOf('"candles":[{');
    await redis.hset(key, '_head', later.slice(0, at), '1s', later.slice(at + 12, -2));
    const got = await read(pool, ['1s', '1m']);
    expect(got.get('1s')).to.deep.equal({ pool_id: 11, ...pool, updated_at: 1_700_000_000_005, ...candle('1s', 1_800_000_002, 2) });
    expect(got.get('1m')).to.include({ open_time: 1_800_000_000, close: 1 });
    await put([{ pool, id: 11, candles: [candle('1s', 1_800_000_003, 3), candle('1m', 1_800_000_000, 3)] }]);
    expect((await read(pool, ['1s'])).get('1s'), 'and the later store where it is newer').to.include({ open_time: 1_800_000_003, close: 3 });
  });

  it('sets an expiry on each pool it writes', async () => {
    const pool = newPool();
    await put([{ pool, id: 4, candles: [candle('1s', 1_800_000_000, 1)] }]);
    const ttl = await redis.pttl(`kline:latest:${poolKey(pool)}`);
    expect(ttl).to.be.greaterThan(6 * 24 * 3600 * 1000).and.at.most(7 * 24 * 3600 * 1000);
  });
});
