import { expect } from 'chai';
import { Registry } from 'prom-client';
import { createLogger } from '@chainpipe/runtime';
import { ManualClock } from '@chainpipe/testing';
import { SourcePoller, type PollOutcome } from '../src/poller';

const T0 = 1_700_000_000_000;
const logger = createLogger({ name: 'poller-test', level: 'silent' });

describe('SourcePoller on a manual clock', () => {
  /**
   * At start the reference tokens may not be loaded yet: the first quotes poll then has nothing to
   * ask for. The next poll must not wait the whole interval (60 s by default), or the price API
   * answers empty lists for a minute after start.
   */
  it('polls at once, again after emptyRetryMs while the source has had nothing to ask for, then every interval', async () => {
    const clock = new ManualClock(T0);
    const calls: number[] = [];
    const answers: PollOutcome[] = [{ newestAsOf: null }, { newestAsOf: T0 }, { newestAsOf: T0 + 1_000 }];
    const poller = new SourcePoller({
      source: 'quotes',
      intervalMs: 60_000,
      maxAgeMs: 120_000,
      poll: async () => {
        calls.push(clock.now() - T0);
        return answers[Math.min(calls.length - 1, answers.length - 1)]!;
      },
      logger,
      registry: new Registry(),
      clock,
    });
    poller.start();
    try {
      await clock.advance(0);
      expect(calls).to.deep.equal([0]);
      await clock.advance(1_000); // the default empty retry: min(interval, 1 s)
      expect(calls).to.deep.equal([0, 1_000]);
      expect(poller.ready()).to.equal(true);
      await clock.advance(59_999);
      expect(calls, 'once it has data the full interval applies').to.have.length(2);
      await clock.advance(1);
      expect(calls).to.deep.equal([0, 1_000, 61_000]);
    } finally {
      await poller.stop();
    }
  });

  it('turns stale the instant its newest data is older than maxAgeMs, by the source timestamps', async () => {
    const clock = new ManualClock(T0);
    let down = false;
    const poller = new SourcePoller({
      source: 'fiat_rates',
      intervalMs: 10_000,
      maxAgeMs: 30_000,
      poll: async () => {
        if (down) throw new Error('connect ECONNREFUSED');
        return { newestAsOf: clock.now() };
      },
      logger,
      registry: new Registry(),
      clock,
    });
    poller.start();
    try {
      await clock.advance(0);
      down = true; // the last good data is stamped T0
      await clock.advance(30_000);
      expect(poller.ageMs()).to.equal(30_000);
      expect(poller.ready(), 'exactly maxAgeMs old is still fresh').to.equal(true);
      await clock.advance(1);
      expect(poller.ready()).to.equal(false);
      expect(poller.health()).to.deep.equal({ state: 'degraded', detail: 'connect ECONNREFUSED' });
      down = false;
      await clock.advance(10_000);
      expect(poller.ready(), 'fresh again at the next poll').to.equal(true);
    } finally {
      await poller.stop();
    }
  });
});
