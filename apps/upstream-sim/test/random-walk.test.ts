import { expect } from 'chai';
import { ManualClock } from '@chainpipe/testing';
import { RandomWalk } from '../src/market/random-walk';

describe('RandomWalk', () => {
  it('moves and restamps only once stepMs has passed since the last move; a pinned value is restamped, not moved', async () => {
    const clock = new ManualClock(1_700_000_000_000);
    const walk = new RandomWalk(100, { volatility: 0.01, stepMs: 1_000, clock, random: () => 1 });
    expect(walk.read()).to.deep.equal({ value: 100, at: 1_700_000_000_000 });
    await clock.advance(999);
    expect(walk.read()).to.deep.equal({ value: 100, at: 1_700_000_000_000 });
    await clock.advance(1);
    expect(walk.read().value).to.be.closeTo(101, 1e-9);
    expect(walk.read().at).to.equal(1_700_000_001_000);
    walk.pin(50);
    await clock.advance(5_000);
    expect(walk.read()).to.deep.equal({ value: 50, at: 1_700_000_006_000 });
  });
});
