import { expect } from 'chai';
import { Registry } from 'prom-client';
import { createLogger } from '@chainpipe/runtime';
import { SourcePoller, type PollOutcome } from '../src/poller';

/**
 * At start the reference tokens may not be loaded yet: the first quotes poll then has nothing to
 * ask for. The next poll must not wait the whole interval (60 s by default), or the price API
 * answers empty lists for a minute after start.
 */
describe('SourcePoller', () => {
  it('polls again soon while the source has had nothing to ask for, then keeps the interval', async () => {
    const calls: number[] = [];
    const answers: PollOutcome[] = [{ newestAsOf: null }, { newestAsOf: 1_700_000_000_000 }, { newestAsOf: 1_700_000_001_000 }];
    const poller = new SourcePoller({
      source: 'quotes',
      intervalMs: 60_000,
      maxAgeMs: 120_000,
      poll: () => {
        calls.push(Date.now());
        return Promise.resolve(answers[Math.min(calls.length - 1, answers.length - 1)]!);
      },
      logger: createLogger({ name: 'poller-test', level: 'silent' }),
      registry: new Registry(),
      now: () => 1_700_000_000_500,
      emptyRetryMs: 50,
    });
    poller.start();
    try {
      const deadline = Date.now() + 3_000;
      while (calls.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      expect(calls.length, 'second poll within 3 s although the interval is 60 s').to.equal(2);
      expect(poller.ready()).to.equal(true);
      // Once it has data the full interval applies again.
      await new Promise((r) => setTimeout(r, 300));
      expect(calls.length).to.equal(2);
    } finally {
      await poller.stop();
    }
  });
});
