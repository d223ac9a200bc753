import { expect } from 'chai';
import { ManualClock } from '@chainpipe/testing';
import { createLogger } from '../src/logger';
import { periodicJob } from '../src/periodic';

describe('periodicJob', () => {
  const logger = createLogger({ name: 'test', level: 'silent' });

  it('starts the next pass one interval after the last one ended: a long pass is never overlapped', async () => {
    const clock = new ManualClock();
    const starts: number[] = [];
    let running = 0;
    let overlapped = false;
    let release: (() => void) | undefined;
    const job = periodicJob({
      name: 'job',
      intervalMs: 60_000,
      logger,
      clock,
      run: async () => {
        starts.push(clock.now());
        if (++running > 1) overlapped = true;
        // the second pass takes three and a half intervals
        if (starts.length === 2) await new Promise<void>((r) => (release = r));
        running--;
      },
    });
    await job.start!();
    await clock.advance(59_999);
    expect(starts, 'the first pass comes one interval after start').to.deep.equal([]);
    await clock.advance(1);
    expect(starts).to.deep.equal([60_000]);
    await clock.advance(60_000);
    expect(starts).to.deep.equal([60_000, 120_000]);
    await clock.advance(210_000);
    expect(starts, 'no pass while one is under way').to.have.length(2);
    release!();
    await clock.advance(59_999);
    expect(starts).to.have.length(2);
    await clock.advance(1);
    expect(starts).to.deep.equal([60_000, 120_000, 390_000]);
    expect(overlapped).to.equal(false);
    await job.stop!();
  });

  it('runs a first pass at start when asked, and goes on after a failed pass', async () => {
    const clock = new ManualClock();
    const starts: number[] = [];
    const job = periodicJob({
      name: 'job',
      intervalMs: 1_000,
      runAtStart: true,
      logger,
      clock,
      run: async () => {
        starts.push(clock.now());
        if (starts.length === 2) throw new Error('a failed pass');
      },
    });
    await job.start!();
    await clock.advance(3_000);
    expect(starts).to.deep.equal([0, 1_000, 2_000, 3_000]);
    await job.stop!();
  });

  it('stop() waits for the pass under way, and no pass comes after it', async () => {
    const clock = new ManualClock();
    let passes = 0;
    let release: (() => void) | undefined;
    const job = periodicJob({
      name: 'job',
      intervalMs: 1_000,
      logger,
      clock,
      run: async () => {
        passes++;
        if (passes === 2) await new Promise<void>((r) => (release = r));
      },
    });
    await job.start!();
    await clock.advance(2_000);
    expect(passes).to.equal(2);
    let stopped = false;
    const stopping = job.stop!().then(() => (stopped = true));
    await clock.advance(0);
    expect(stopped, 'stop waits for the pass under way').to.equal(false);
    release!();
    await stopping;
    await clock.advance(10_000);
    expect(passes, 'no pass after stop').to.equal(2);
    expect(clock.pendingTimers).to.equal(0);
  });
});
