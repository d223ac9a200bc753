import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { createDb, type Knex } from '@chainpipe/db';
import { CandleRepository } from '@chainpipe/kline-store';
import { createLogger } from '@chainpipe/runtime';
import { ManualClock, testEnv, waitFor } from '@chainpipe/testing';
import { secondsRetention } from '../../apps/kline-aggregator/src/retention';

/**
 * 1s candles are kept KLINE_1S_RETENTION_HOURS (24 h by default); candles of longer intervals are
 * kept for ever. The retention entry point deletes, across pools, the 1s candles whose open time
 * is older than that and nothing else.
 */
describe('kline 1s candle retention', () => {
  const env = testEnv();
  let db: Knex;
  let poolId: number;
  const now = 1_800_000_000_000;
  const nowS = now / 1000;
  const day = 24 * 3600;

  before(async () => {
    db = createDb({ url: env.databaseUrl, poolMax: 2 });
    const [row] = await db('kline.pools')
      .insert({ chain_type: 'evm', chain_id: 1, network_id: 'eth', pool_address: `0x${randomBytes(20).toString('hex')}`, is_active: true })
      .returning('id');
    poolId = (row as { id: number }).id;
  });
  after(async () => {
    await db('kline.pools').where({ id: poolId }).delete();
    await db.destroy();
  });

  const candle = (interval: string, openTime: number) => ({
    pool_id: poolId, interval, open_time: openTime, open: 1, high: 1, low: 1, close: 1, volume: 1, open_src: openTime * 1000, close_src_time: openTime * 1000, close_src_rank: 0,
  });
  const kept = async () =>
    (await db('kline.candles').where({ pool_id: poolId }).orderBy(['interval', 'open_time']).select('interval', 'open_time')).map((r: { interval: string; open_time: string | number }) => `${r.interval}@${Number(r.open_time)}`);

  it('deletes 1s candles older than the retention and keeps younger 1s and all longer candles', async () => {
    await db('kline.candles').insert([
      candle('1s', nowS - day - 10),
      candle('1s', nowS - day - 1),
      candle('1s', nowS - day + 5),
      candle('1s', nowS - 1),
      candle('1m', nowS - 2 * day),
      candle('1d', nowS - 30 * day),
    ]);
    // Started one interval before `now`: its first pass runs at `now`.
    const clock = new ManualClock(now - 60_000);
    const retention = secondsRetention({ candles: new CandleRepository(db), retentionSeconds: day, intervalMs: 60_000, logger: createLogger({ name: 'retention-test', level: 'silent' }), clock });
    await retention.start!();
    try {
      await clock.advance(59_999);
      expect((await kept()).filter((k) => k.startsWith('1s@')), 'no pass before the interval').to.have.length(4);
      await clock.advance(1);
      await waitFor(async () => (await kept()).filter((k) => k.startsWith('1s@')).length === 2, { timeoutMs: 10_000 });
    } finally {
      await retention.stop!();
    }
    expect(await kept()).to.deep.equal([`1d@${nowS - 30 * day}`, `1m@${nowS - 2 * day}`, `1s@${nowS - day + 5}`, `1s@${nowS - 1}`]);
  });

  it("deleting a pool deletes its candles and no other pool's", async () => {
    const [row] = await db('kline.pools')
      .insert({ chain_type: 'evm', chain_id: 1, network_id: 'eth', pool_address: `0x${randomBytes(20).toString('hex')}`, is_active: true })
      .returning('id');
    const goneId = (row as { id: number }).id;
    await db('kline.candles').insert([{ ...candle('1m', nowS), pool_id: goneId }, { ...candle('1d', nowS - day), pool_id: goneId }, candle('1h', nowS)]);
    await db('kline.pools').where({ id: goneId }).delete();
    expect(await db('kline.candles').where({ pool_id: goneId }).count<{ n: string }[]>({ n: '*' })).to.deep.equal([{ n: '0' }]);
    expect(await kept()).to.include(`1h@${nowS}`);
  });
});
