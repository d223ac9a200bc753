import { expect } from 'chai';
import { ForbiddenState, forbidden, waitFor } from '../src/wait';

describe('waitFor', () => {
  it('retries a check that throws an ordinary error until it holds', async () => {
    let calls = 0;
    const value = await waitFor(
      () => {
        calls++;
        if (calls < 3) throw new Error('not yet');
        return 'done';
      },
      { intervalMs: 1 },
    );
    expect([value, calls]).to.deep.equal(['done', 3]);
  });

  // The timeouts are far longer than mocha's 20 s: a poll that retried instead of failing at once
  // would fail this test by mocha's own timeout.
  it('fails at once on a forbidden state, even when a later check would have passed', async () => {
    let calls = 0;
    const err = await waitFor(
      () => {
        calls++;
        if (calls === 2) forbidden('answered 500');
        return calls > 5;
      },
      { intervalMs: 1, timeoutMs: 600_000, what: 'ingest back' },
    ).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(ForbiddenState);
    expect((err as Error).message).to.equal('ingest back: answered 500');
    expect(calls).to.equal(2);
  });

  it('times out naming what it waited for and the last error', async () => {
    const err = await waitFor(
      () => {
        throw new Error('connection refused');
      },
      { intervalMs: 1, timeoutMs: 20, what: 'readiness' },
    ).catch((e: unknown) => e);
    expect((err as Error).message).to.equal('timed out waiting for readiness: Error: connection refused');
  });
});
