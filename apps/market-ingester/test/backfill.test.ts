import { expect } from 'chai';
import { Registry } from 'prom-client';
import type { PoolRecord, RestOhlcv } from '@chainpipe/kline';
import { createLogger } from '@chainpipe/runtime';
import { ManualClock } from '@chainpipe/testing';
import { Backfill } from '../src/backfill';

const logger = createLogger({ name: 'test', level: 'silent' });
const settle = () => new Promise((resolve) => setImmediate(resolve));
const pool = (id: number) => ({ id, network_id: 'eth', pool_address: `0x${id}`, token: 'base' }) as unknown as PoolRecord;
const candle = (t: number): RestOhlcv => ({ t, o: 1, h: 2, l: 0.5, c: 1.5, v: 10 });

describe('Backfill: a gap of the live feed asked from the REST OHLCV', () => {
  const M = 1_800_000_000 - (1_800_000_000 % 60);

  function setup(fail: (poolId: number) => boolean = () => false) {
    const clock = new ManualClock(M * 1000 + 30_000);
    const asked: { poolId: number; beforeSec: number; limit: number }[] = [];
    const published: { poolId: number; times: number[] }[] = [];
    const backfill = new Backfill({
      fetchMinutes: async (p, beforeSec, limit) => {
        asked.push({ poolId: p.id, beforeSec, limit });
        if (fail(p.id)) throw new Error('upstream away');
        // The upstream answers more than asked for around the window: the fill keeps the gap's minutes.
        return [candle(M - 180), candle(M - 120), candle(M - 60), candle(M), candle(M + 60)];
      },
      publish: (p, candles) => published.push({ poolId: p.id, times: candles.map((c) => c.t) }),
      clock, logger, registry: new Registry(), settleMs: 5_000, concurrency: 2, retryMs: 30_000, attempts: 3,
    });
    return { clock, asked, published, backfill };
  }

  it("asks once the gap's last minute has closed, for its minutes only, and publishes those", async () => {
    const s = setup();
    s.backfill.schedule([pool(1), pool(2)], M - 100, M + 20, 'reconnect');
    // Due at the end of minute M plus the settle time: 30 s + 5 s from now.
    expect(s.clock.nextDueIn()).to.equal(35_000);
    await s.clock.advance(35_000);
    for (let i = 0; i < 5; i++) await settle();
    expect(s.asked).to.deep.equal([
      { poolId: 1, beforeSec: M + 60, limit: 3 },
      { poolId: 2, beforeSec: M + 60, limit: 3 },
    ]);
    expect(s.published).to.deep.equal([
      { poolId: 1, times: [M - 120, M - 60, M] },
      { poolId: 2, times: [M - 120, M - 60, M] },
    ]);
  });

  it('asks a failed pool again after retryMs, up to the attempts, and never a pool that succeeded', async () => {
    const s = setup((id) => id === 2);
    s.backfill.schedule([pool(1), pool(2)], M, M, 'restart');
    await s.clock.advance(35_000);
    for (let i = 0; i < 5; i++) await settle();
    await s.clock.advance(30_000);
    for (let i = 0; i < 5; i++) await settle();
    await s.clock.advance(30_000);
    for (let i = 0; i < 5; i++) await settle();
    await s.clock.advance(30_000);
    for (let i = 0; i < 5; i++) await settle();
    expect(s.asked.map((a) => a.poolId)).to.deep.equal([1, 2, 2, 2]);
    expect(s.published.map((p) => p.poolId)).to.deep.equal([1]);
  });

  it('goes back at most 1000 minutes', async () => {
    const s = setup();
    s.backfill.schedule([pool(1)], M - 5_000 * 60, M, 'restart');
    await s.clock.advance(35_000);
    for (let i = 0; i < 5; i++) await settle();
    expect(s.asked).to.deep.equal([{ poolId: 1, beforeSec: M + 60, limit: 1000 }]);
    await s.backfill.stop();
  });

  it('lists each gap in the status: waiting, then filled with the minutes it brought, the 1s candles marked missing', async () => {
    const s = setup();
    s.backfill.schedule([pool(1), pool(2)], M - 100, M + 20, 'reconnect');
    const iso = (sec: number) => new Date(sec * 1000).toISOString();
    const window = { reason: 'reconnect', from: iso(M - 120), to: iso(M), pools: 2, missingIntervals: ['1s'] };
    expect(s.backfill.recentGaps()).to.deep.equal([{ ...window, state: 'waiting', candles: 0 }]);
    await s.clock.advance(35_000);
    for (let i = 0; i < 5; i++) await settle();
    // Three of the upstream's five minutes fall in the window, for each of the two pools.
    expect(s.backfill.recentGaps()).to.deep.equal([{ ...window, state: 'filled', candles: 6 }]);
  });

  it('a gap whose pool fails every attempt is listed as failed; only the latest twenty are kept', async () => {
    const s = setup((id) => id === 2);
    s.backfill.schedule([pool(2)], M, M, 'restart');
    for (let a = 0; a < 3; a++) {
      await s.clock.advance(a === 0 ? 35_000 : 30_000);
      for (let i = 0; i < 5; i++) await settle();
    }
    expect(s.backfill.recentGaps().map((g) => [g.state, g.candles])).to.deep.equal([['failed', 0]]);
    for (let k = 0; k < 25; k++) s.backfill.schedule([pool(1)], M + k * 60, M + k * 60, 'dropped');
    const gaps = s.backfill.recentGaps();
    expect(gaps).to.have.length(20);
    expect(gaps[19].from).to.equal(new Date((M + 24 * 60) * 1000).toISOString());
    await s.backfill.stop();
  });
});
