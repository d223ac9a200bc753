import { expect } from 'chai';
import { ManualClock } from '@chainpipe/testing';
import { GIVE_UP_AFTER_MS, MAX_RETRY_INTERVAL_MS, givenUp, retryDelayMs } from '../src/schedule';

describe('webhook retry schedule', () => {
  it('waits 1 s after the first failure and doubles after each one, never past 36 hours', () => {
    expect([1, 2, 3, 4, 5, 10].map(retryDelayMs)).to.deep.equal([1_000, 2_000, 4_000, 8_000, 16_000, 512_000]);
    expect(retryDelayMs(17)).to.equal(65_536_000);
    expect(retryDelayMs(18), '2^17 s would pass 36 h').to.equal(MAX_RETRY_INTERVAL_MS);
    expect(retryDelayMs(1_000)).to.equal(MAX_RETRY_INTERVAL_MS);
  });

  it('gives up exactly 36 hours after the first failure, walking the schedule on a clock', async () => {
    const clock = new ManualClock(1_700_000_000_000);
    const firstFailedAt = clock.now();
    const attemptsAt: number[] = [];
    for (let failures = 1; !givenUp(firstFailedAt, clock.now()); failures++) {
      await clock.advance(retryDelayMs(failures));
      attemptsAt.push(clock.now() - firstFailedAt);
    }
    expect(attemptsAt.slice(0, 4)).to.deep.equal([1_000, 3_000, 7_000, 15_000]);
    // The attempt that finds it past the give-up time is the first at or after 36 h.
    expect(attemptsAt.at(-1)).to.be.at.least(GIVE_UP_AFTER_MS);
    expect(attemptsAt.at(-2)).to.be.below(GIVE_UP_AFTER_MS);
    expect(givenUp(firstFailedAt, firstFailedAt + GIVE_UP_AFTER_MS - 1)).to.equal(false);
    expect(givenUp(firstFailedAt, firstFailedAt + GIVE_UP_AFTER_MS)).to.equal(true);
  });
});
