import { expect } from 'chai';
import { ManualClock } from '@chainpipe/testing';

describe('ManualClock', () => {
  it('runs due timeouts in order of due time, then of creation, each at its own instant', async () => {
    const clock = new ManualClock(1_000);
    const seen: Array<[string, number]> = [];
    clock.setTimeout(() => seen.push(['c', clock.now()]), 300);
    clock.setTimeout(() => seen.push(['a', clock.now()]), 100);
    clock.setTimeout(() => seen.push(['b', clock.now()]), 100);
    clock.setTimeout(() => seen.push(['late', clock.now()]), 301);
    await clock.advance(300);
    expect(seen).to.deep.equal([['a', 1_100], ['b', 1_100], ['c', 1_300]]);
    expect(clock.now()).to.equal(1_300);
    expect(clock.pendingTimers).to.equal(1);
    expect(clock.nextDueIn()).to.equal(1);
    await clock.advance(1);
    expect(seen.at(-1)).to.deep.equal(['late', 1_301]);
    expect(clock.nextDueIn()).to.equal(undefined);
  });

  it('runs an interval once per period until cancelled, and never a cancelled timeout', async () => {
    const clock = new ManualClock();
    const ticks: number[] = [];
    const interval = clock.setInterval(() => {
      ticks.push(clock.now());
      if (ticks.length === 3) interval.cancel();
    }, 250);
    let cancelledRan = false;
    clock.setTimeout(() => (cancelledRan = true), 10).cancel();
    await clock.advance(10_000);
    expect(ticks).to.deep.equal([250, 500, 750]);
    expect(cancelledRan).to.equal(false);
    expect(clock.pendingTimers).to.equal(0);
  });

  it('runs timers set by a timer when they fall due inside the same advance', async () => {
    const clock = new ManualClock();
    const seen: number[] = [];
    clock.setTimeout(() => {
      seen.push(clock.now());
      clock.setTimeout(() => seen.push(clock.now()), 50);
    }, 100);
    await clock.advance(149);
    expect(seen).to.deep.equal([100]);
    await clock.advance(1);
    expect(seen).to.deep.equal([100, 150]);
  });

  it('wakes a sleep at its instant, and follows code that awaits between sleeps', async () => {
    const clock = new ManualClock();
    const woke: number[] = [];
    const loop = (async () => {
      for (const ms of [100, 200, 400]) {
        await clock.sleep(ms);
        await Promise.resolve(); // some awaited work before the next wait
        woke.push(clock.now());
      }
    })();
    await clock.advance(699);
    expect(woke).to.deep.equal([100, 300]);
    await clock.advance(1);
    await loop;
    expect(woke).to.deep.equal([100, 300, 700]);
  });

  it('ends a sleep at once when its signal aborts, leaving no timer behind', async () => {
    const clock = new ManualClock();
    const controller = new AbortController();
    let done = false;
    const sleeping = clock.sleep(60_000, controller.signal).then(() => (done = true));
    await clock.advance(1_000);
    expect(done).to.equal(false);
    controller.abort();
    await sleeping;
    expect(clock.now()).to.equal(1_000);
    expect(clock.pendingTimers).to.equal(0);
    await clock.sleep(5, controller.signal); // already aborted: no time needed
  });

  it('advanceToNext jumps straight to the next due timer', async () => {
    const clock = new ManualClock();
    let ran = false;
    clock.setTimeout(() => (ran = true), 86_400_000);
    await clock.advanceToNext();
    expect(ran).to.equal(true);
    expect(clock.now()).to.equal(86_400_000);
  });
});
