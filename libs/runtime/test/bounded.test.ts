import { expect } from 'chai';
import { settleAll } from '../src/bounded';

describe('settleAll', () => {
  it('resolves once every promise has', async () => {
    const done: number[] = [];
    const later = (n: number, ms: number) => new Promise<void>((r) => setTimeout(() => r(void done.push(n)), ms));
    await settleAll([later(1, 15), later(2, 1), later(3, 8)]);
    expect(done.sort()).to.deep.equal([1, 2, 3]);
  });

  it('throws the first rejection only after the others settled', async () => {
    let slowDone = false;
    const slow = new Promise<void>((r) => setTimeout(() => r(void (slowDone = true)), 20));
    const err = await settleAll([Promise.reject(new Error('first')), slow, Promise.reject(new Error('second'))]).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(err?.message).to.equal('first');
    expect(slowDone, 'the slow one finished before the rejection came out').to.equal(true);
  });
});
