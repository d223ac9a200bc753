import { expect } from 'chai';
import { freshOrNone, isFresh } from '../src';

describe('freshness: one rule for every served value', () => {
  it('serves a value up to its maximum age by its source time, not a millisecond older', () => {
    expect(isFresh(1_000, 61_000, 60_000), 'exactly the maximum age').to.equal(true);
    expect(isFresh(1_000, 61_001, 60_000)).to.equal(false);
    expect(isFresh(5_000, 1_000, 60_000), 'a source time ahead of the clock').to.equal(true);
  });

  it('gives the value itself when fresh, nothing when stale or absent', () => {
    const rates = { as_of: 1_000, base: 'USD' };
    expect(freshOrNone(rates, 2_000, 1_000)).to.equal(rates);
    expect(freshOrNone(rates, 2_001, 1_000)).to.equal(undefined);
    expect(freshOrNone(undefined, 2_000, 1_000)).to.equal(undefined);
  });
});
