import { getEventListeners } from 'node:events';
import { expect } from 'chai';
import { sleep, systemClock, timeoutSignal } from '../src/clock';

describe('sleep', () => {
  it('leaves no abort listener behind on a long-lived signal once its time is up', async () => {
    const controller = new AbortController();
    for (let i = 0; i < 20; i++) await sleep(1, controller.signal);
    expect(getEventListeners(controller.signal, 'abort')).to.have.length(0);
  });

  it('ends at once when the signal aborts, and at once when it already had', async () => {
    const controller = new AbortController();
    const waiting = sleep(600_000, controller.signal);
    controller.abort();
    await waiting; // a 10-minute sleep inside mocha's 20 s: only an early end passes
    await sleep(600_000, controller.signal);
  });
});

describe('systemClock', () => {
  it('runs a timeout once and an interval until cancelled; a cancelled timeout never runs', async () => {
    const calls: string[] = [];
    systemClock.setTimeout(() => calls.push('timeout'), 1);
    systemClock.setTimeout(() => calls.push('cancelled'), 1).cancel();
    const interval = systemClock.setInterval(() => {
      calls.push('interval');
      if (calls.filter((c) => c === 'interval').length === 3) interval.cancel();
    }, 1);
    await sleep(50);
    expect(calls.filter((c) => c === 'timeout')).to.have.length(1);
    expect(calls.filter((c) => c === 'interval')).to.have.length(3);
    expect(calls).to.not.include('cancelled');
    const now = systemClock.now();
    expect(Math.abs(now - Date.now())).to.be.lessThan(5);
  });
});

describe('timeoutSignal', () => {
  it('aborts with a TimeoutError when its time on the clock is up, and never once cancelled', async () => {
    const due = timeoutSignal(systemClock, 5);
    await sleep(30);
    expect(due.signal.aborted).to.equal(true);
    expect((due.signal.reason as DOMException).name).to.equal('TimeoutError');
    const cancelled = timeoutSignal(systemClock, 5);
    cancelled.cancel();
    await sleep(30);
    expect(cancelled.signal.aborted).to.equal(false);
  });

  it('follows another signal: aborts with its reason when it aborts first, and says which of the two fired', async () => {
    const caller = new AbortController();
    const followed = timeoutSignal(systemClock, 1_000, caller.signal);
    caller.abort(new Error('client left'));
    expect(followed.signal.aborted).to.equal(true);
    expect((followed.signal.reason as Error).message).to.equal('client left');
    expect(followed.timedOut()).to.equal(false);
    followed.cancel();

    const already = new AbortController();
    already.abort();
    expect(timeoutSignal(systemClock, 1_000, already.signal).signal.aborted, 'a followed signal aborted before').to.equal(true);

    const quiet = new AbortController();
    const due = timeoutSignal(systemClock, 5, quiet.signal);
    await sleep(30);
    expect(due.timedOut()).to.equal(true);
    expect((due.signal.reason as DOMException).name).to.equal('TimeoutError');
    quiet.abort();
    expect((due.signal.reason as DOMException).name, 'the first reason stays').to.equal('TimeoutError');

    const done = new AbortController();
    const cancelled = timeoutSignal(systemClock, 5, done.signal);
    cancelled.cancel();
    done.abort();
    await sleep(30);
    expect(cancelled.signal.aborted, 'cancelled: neither the clock nor the followed signal reaches it').to.equal(false);
  });
});
