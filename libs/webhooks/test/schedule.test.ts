import { expect } from 'chai';
import { ManualClock } from '@chainpipe/testing';
import { GIVE_UP_AFTER_MS, MAX_RETRY_INTERVAL_MS, givenUp, nextAttemptAt, retryDelayMs } from '../src/schedule';

const HOUR = 3600 * 1000;

describe('webhook retry schedule', () => {
  it('waits 1 s after the first failure and doubles after each one, never past 36 hours', () => {
    expect([1, 2, 3, 4, 5, 10].map(retryDelayMs)).to.deep.equal([1_000, 2_000, 4_000, 8_000, 16_000, 512_000]);
    expect(retryDelayMs(17)).to.equal(65_536_000);
    expect(retryDelayMs(18), '2^17 s would pass 36 h').to.equal(MAX_RETRY_INTERVAL_MS);
    expect(retryDelayMs(1_000)).to.equal(MAX_RETRY_INTERVAL_MS);
  });

  it('walks 1, 3, 7, 15 s …, makes its last attempt at 36 h after the first failure and gives up there', async () => {
    const clock = new ManualClock(1_700_000_000_000);
    const firstFailedAt = clock.now();
    const attemptsAt: number[] = [];
    for (let failures = 1; !givenUp(firstFailedAt, clock.now()); failures++) {
      await clock.advance(nextAttemptAt(failures, firstFailedAt, clock.now()) - clock.now());
      attemptsAt.push(clock.now() - firstFailedAt);
    }
    expect(attemptsAt.slice(0, 4)).to.deep.equal([1_000, 3_000, 7_000, 15_000]);
    // 2^17 − 1 s ≈ 36.4 h would overshoot: the attempt after the one at 18.2 h is the one at 36 h.
    expect(attemptsAt.at(-2)).to.equal(65_535_000);
    expect(attemptsAt.at(-1)).to.equal(GIVE_UP_AFTER_MS);
    expect(attemptsAt.at(-1)! - attemptsAt.at(-2)!).to.be.below(18 * HOUR);
    expect(givenUp(firstFailedAt, firstFailedAt + GIVE_UP_AFTER_MS - 1)).to.equal(false);
    expect(givenUp(firstFailedAt, firstFailedAt + GIVE_UP_AFTER_MS)).to.equal(true);
  });

  it('never schedules in the past, also when an attempt ran late after the give-up time', () => {
    expect(nextAttemptAt(3, 0, 40 * HOUR)).to.equal(40 * HOUR);
  });
});
