import { expect } from 'chai';
import { movesForward, newerCandle, type CandlesHead } from '../src';

const head: CandlesHead = { pool_id: 7, chain_type: 'evm', chain_id: 56, pool_address: '0xabc', token: 'base', updated_at: 0 };
const sent = (open_time: number, updated_at: number) => ({ ...head, updated_at, interval: '1m' as const, open_time, open: 1, high: 2, low: 0.5, close: 1.5, volume: 3 });

describe("movesForward: a connection's live candle never goes back", () => {
  it('lets anything through to a connection that has nothing of that pool and interval yet', () => {
    expect(movesForward(undefined, 1_800_000_000, 1)).to.equal(true);
  });

  it('lets a later candle through, whenever it was stored', () => {
    const held = sent(1_800_000_000, 5_000);
    expect(movesForward(held, 1_800_000_060, 4_000)).to.equal(true);
  });

  it('drops an earlier candle, even one stored after the one held', () => {
    const held = sent(1_800_000_060, 5_000);
    expect(movesForward(held, 1_800_000_000, 6_000)).to.equal(false);
  });

  it('drops a version of the same candle stored before the one held, lets a later or the same one through', () => {
    const held = sent(1_800_000_000, 5_000);
    expect(movesForward(held, 1_800_000_000, 4_999), 'older version').to.equal(false);
    expect(movesForward(held, 1_800_000_000, 5_000), 'the same version again').to.equal(true);
    expect(movesForward(held, 1_800_000_000, 5_001), 'newer version').to.equal(true);
  });

  it('agrees with newerCandle: what moves forward from a held candle is never the older of the two', () => {
    const held = sent(1_800_000_000, 5_000);
    for (const [openTime, updatedAt] of [[1_799_999_940, 9_000], [1_800_000_000, 4_000], [1_800_000_000, 5_000], [1_800_000_000, 6_000], [1_800_000_060, 1]]) {
      const next = sent(openTime, updatedAt);
      const forward = movesForward(held, openTime, updatedAt);
      expect(forward ? newerCandle(next, held) : newerCandle(held, next), `${openTime}/${updatedAt}`).to.equal(forward ? next : held);
    }
  });
});
