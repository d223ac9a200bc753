import { expect } from 'chai';
import { ManualClock } from '@chainpipe/testing';
import { RefreshedValue } from '../src/refreshed-value';

describe('RefreshedValue on a manual clock', () => {
  const tick = () => new Promise<void>((r) => setImmediate(r));

  it('shares one load, answers from memory, reloads behind the readers past refreshMs and makes them wait past maxAgeMs', async () => {
    const clock = new ManualClock(0);
    let loads = 0;
    let source = 'a';
    const value = new RefreshedValue({
      load: async () => {
        loads++;
        await tick();
        return source;
      },
      refreshMs: 1_000,
      maxAgeMs: 5_000,
      clock,
    });
    expect(await Promise.all([value.get(), value.get(), value.get()])).to.deep.equal(['a', 'a', 'a']);
    expect(loads).to.equal(1);
    source = 'b';
    await clock.advance(1_000);
    expect(await value.get(), 'not past refreshMs yet').to.equal('a');
    expect(loads).to.equal(1);
    await clock.advance(1);
    expect(await value.get(), 'answered at once, reloaded behind').to.equal('a');
    expect(loads).to.equal(2);
    await tick();
    await tick();
    expect(await value.get()).to.equal('b');
    source = 'c';
    await clock.advance(5_001);
    expect(await value.get(), 'too old to answer: waits for the load').to.equal('c');
    expect(loads).to.equal(3);
  });

  it('a failed load fails its waiters and keeps the value held before', async () => {
    const clock = new ManualClock(0);
    let fail = false;
    const value = new RefreshedValue({ load: async () => (fail ? Promise.reject(new Error('down')) : 'kept'), refreshMs: 10, maxAgeMs: 100, clock });
    expect(await value.get()).to.equal('kept');
    fail = true;
    await clock.advance(50);
    expect(await value.get(), 'background reload fails quietly').to.equal('kept');
    await tick();
    await clock.advance(100);
    let error: unknown;
    await value.get().catch((e: unknown) => (error = e));
    expect((error as Error)?.message).to.equal('down');
    fail = false;
    expect(await value.get()).to.equal('kept');
  });
});
