import { expect } from 'chai';
import { createLogger } from '../src/logger';
import { periodicJob } from '../src/periodic';

describe('periodicJob', () => {
  const logger = createLogger({ name: 'test', level: 'silent' });

  it('runs one pass at a time, goes on after a failed pass, and stop() waits for the pass under way', async () => {
    let running = 0;
    let overlapped = false;
    const passes: number[] = [];
    let release: (() => void) | undefined;
    const job = periodicJob({
      name: 'job',
      intervalMs: 1,
      runAtStart: true,
      logger,
      run: async () => {
        running++;
        if (running > 1) overlapped = true;
        passes.push(passes.length);
        try {
          if (passes.length === 2) throw new Error('a failed pass');
          if (passes.length === 4) await new Promise<void>((r) => (release = r));
        } finally {
          running--;
        }
      },
    });
    await job.start!();
    while (passes.length < 4 || !release) await new Promise((r) => setTimeout(r, 1));
    let stopped = false;
    const stopping = job.stop!().then(() => (stopped = true));
    await new Promise((r) => setTimeout(r, 20));
    expect(stopped, 'stop waits for the pass under way').to.equal(false);
    release!();
    await stopping;
    const after = passes.length;
    await new Promise((r) => setTimeout(r, 20));
    expect(passes.length, 'no pass after stop').to.equal(after);
    expect(overlapped).to.equal(false);
    expect(after).to.equal(4);
  });
});
