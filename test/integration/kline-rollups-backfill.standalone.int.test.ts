import { expect } from 'chai';
import { createDb, type Knex } from '@chainpipe/db';
import type { OhlcvRecord } from '@chainpipe/kline';
import { CandleRepository } from '@chainpipe/kline-store';
import { suiteDatabase } from '@chainpipe/testing';
import { up } from '../../libs/db/migrations/20261128160000_kline_rollups_stored';
import { registerPool, removePool } from './kline-support';

/**
 * Weeks, months and years are stored candles since the migration that backfills them from the
 * days stored before it. The backfill against real Postgres: the days of one pool as the
 * aggregator left them, the migration's `up` run on them, the candles the history query then
 * answers and their sources compared with hand-computed roll-ups (the rules of `rollUpDaily`),
 * and run again it changes nothing. In a database of the suite's own: the backfill acts on every
 * stored day, and would add weeks, months and years to the days of suites running beside it.
 */
describe('kline: weeks, months and years backfilled from stored days', () => {
  let db: Knex;
  let poolId: number;
  const utc = (iso: string) => Date.parse(iso) / 1000;

  before(async () => {
    db = createDb({ url: await suiteDatabase('kline_rollups'), poolMax: 2 });
    poolId = await registerPool(db);
  });

  after(async () => {
    await removePool(db, poolId);
    await db.destroy();
  });

  /** The weeks, months and years as the history query answers them. */
  const rollups = async () => {
    const repo = new CandleRepository(db);
    const out: OhlcvRecord[] = [];
    for (const interval of ['1M', '1Y', '1w'] as const) out.push(...(await repo.history(poolId, interval, 0, 4_000_000_000, 100)));
    return out;
  };
  /** Where each one's open and close came from: `interval open_time open_src close_src_time`. */
  const sources = async () =>
    ((await db('kline.candles').where({ pool_id: poolId }).whereIn('interval', ['1w', '1M', '1Y']).orderBy(['interval', 'open_time']).select('interval', 'open_time', 'open_src', 'close_src_time')) as Record<string, string>[]).map(
      (r) => `${r.interval} ${r.open_time} ${r.open_src} ${r.close_src_time}`,
    );

  it('writes each period of the days by the roll-up rules, and a second run changes nothing', async () => {
    // Sun 2026-11-22, Mon 11-23 (no volume), Tue 11-24, Mon 11-30, Tue 12-01; each day's sources its own start.
    const days: [string, number, number, number, number, number | null][] = [
      ['2026-11-22T00:00:00Z', 1, 5, 1, 2, 5],
      ['2026-11-23T00:00:00Z', 2, 6, 1.5, 3, null],
      ['2026-11-24T00:00:00Z', 3, 9, 2, 4, 10],
      ['2026-11-30T00:00:00Z', 4, 4.5, 3.5, 4.2, 1],
      ['2026-12-01T00:00:00Z', 4.2, 8, 4, 7, 2],
    ];
    await db('kline.candles').insert(
      days.map(([iso, open, high, low, close, volume], i) => ({ pool_id: poolId, interval: '1d', open_time: utc(iso), open, high, low, close, volume, open_src: utc(iso), close_src_time: utc(iso), close_src_rank: i + 1 })),
    );
    await up(db);
    const c = (interval: OhlcvRecord['interval'], start: string, open: number, high: number, low: number, close: number, volume: number): OhlcvRecord => ({ pool_id: poolId, interval, open_time: utc(start), open, high, low, close, volume });
    const src = (interval: string, start: string, openSrc: string, closeSrc: string) => `${interval} ${utc(start)} ${utc(openSrc)} ${utc(closeSrc)}`;
    // Weeks start Monday: Nov 16 (the 22nd alone), Nov 23 (23rd + 24th: volume null + 10), Nov 30 (30th + Dec 1st).
    // November: open of the 22nd, close of the 30th, high 9, low 1, volume 5 + 10 + 1. The year: every day, volume 18.
    const expected = [
      c('1M', '2026-11-01T00:00:00Z', 1, 9, 1, 4.2, 16),
      c('1M', '2026-12-01T00:00:00Z', 4.2, 8, 4, 7, 2),
      c('1Y', '2026-01-01T00:00:00Z', 1, 9, 1, 7, 18),
      c('1w', '2026-11-16T00:00:00Z', 1, 5, 1, 2, 5),
      c('1w', '2026-11-23T00:00:00Z', 2, 9, 1.5, 4, 10),
      c('1w', '2026-11-30T00:00:00Z', 4, 8, 3.5, 7, 3),
    ];
    // The open's source the earliest day's, the close's the latest day's.
    const expectedSources = [
      src('1M', '2026-11-01T00:00:00Z', '2026-11-22T00:00:00Z', '2026-11-30T00:00:00Z'),
      src('1M', '2026-12-01T00:00:00Z', '2026-12-01T00:00:00Z', '2026-12-01T00:00:00Z'),
      src('1Y', '2026-01-01T00:00:00Z', '2026-11-22T00:00:00Z', '2026-12-01T00:00:00Z'),
      src('1w', '2026-11-16T00:00:00Z', '2026-11-22T00:00:00Z', '2026-11-22T00:00:00Z'),
      src('1w', '2026-11-23T00:00:00Z', '2026-11-23T00:00:00Z', '2026-11-24T00:00:00Z'),
      src('1w', '2026-11-30T00:00:00Z', '2026-11-30T00:00:00Z', '2026-12-01T00:00:00Z'),
    ];
    expect(await rollups()).to.deep.equal(expected);
    expect(await sources()).to.deep.equal(expectedSources);
    await up(db);
    expect(await rollups(), 'after a second run').to.deep.equal(expected);
    expect(await sources(), 'after a second run').to.deep.equal(expectedSources);
  });
});
