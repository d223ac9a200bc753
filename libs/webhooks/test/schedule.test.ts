import { expect } from 'chai';
import { ManualClock } from '@chainpipe/testing';
import { GIVE_UP_AFTER_MS, MAX_RETRY_INTERVAL_MS, failedBatch, givenUp, nextAttemptAt, retryDelayMs } from '../src/schedule';

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

  it('a failed POST: each transaction counts it, its own clock started at its first failure; the batch is scheduled by its most-failed one', () => {
    const t0 = 1_700_000_000_000;
    // Two transactions that failed 12 times since t0, and one queued behind that no POST carried yet.
    const now = t0 + 2 * HOUR;
    const out = failedBatch(
      [
        { attempts: 12, firstFailedAt: t0 },
        { attempts: 12, firstFailedAt: t0 },
        { attempts: 0, firstFailedAt: null },
      ],
      now,
    );
    expect(out.rows).to.deep.equal([
      { attempts: 13, firstFailedAt: t0 },
      { attempts: 13, firstFailedAt: t0 },
      { attempts: 1, firstFailedAt: now },
    ]);
    expect(out).to.include({ giveUp: false, nextAttemptAt: now + retryDelayMs(13) });
    // A batch of transactions no POST carried before: 1 s, whatever failed earlier in the queue.
    expect(failedBatch([{ attempts: 0, firstFailedAt: null }], now)).to.deep.equal({ rows: [{ attempts: 1, firstFailedAt: now }], giveUp: false, nextAttemptAt: now + 1_000 });
  });

  it('a failed POST gives up 36 h after the first failure of its own transactions, not of others', () => {
    const t0 = 1_700_000_000_000;
    expect(failedBatch([{ attempts: 20, firstFailedAt: t0 }], t0 + GIVE_UP_AFTER_MS)).to.include({ giveUp: true, nextAttemptAt: null });
    // Failing first 1 h later, the same moment is 35 h into its clock: the last attempt is at its own 36 h.
    const late = t0 + HOUR;
    expect(failedBatch([{ attempts: 20, firstFailedAt: late }], t0 + GIVE_UP_AFTER_MS)).to.include({ giveUp: false, nextAttemptAt: late + GIVE_UP_AFTER_MS });
  });
});
