import { getEventListeners } from 'node:events';
import { expect } from 'chai';
import { isDependencyUnavailable, sleep } from '../src/errors';

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

describe('isDependencyUnavailable', () => {
  it('recognises Postgres and Redis being away, through causes', () => {
    expect(isDependencyUnavailable(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }))).to.equal(true);
    expect(isDependencyUnavailable(Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }))).to.equal(true);
    expect(isDependencyUnavailable(new Error('Connection terminated unexpectedly'))).to.equal(true);
    expect(isDependencyUnavailable(Object.assign(new Error('Reached the max retries per request limit (which is 2).'), { name: 'MaxRetriesPerRequestError' }))).to.equal(true);
    expect(isDependencyUnavailable(new Error('insert failed', { cause: Object.assign(new Error('x'), { code: '08006' }) }))).to.equal(true);
  });

  it('does not mistake a bad query or a bug for an outage', () => {
    expect(isDependencyUnavailable(Object.assign(new Error('duplicate key value violates unique constraint'), { code: '23505' }))).to.equal(false);
    expect(isDependencyUnavailable(new TypeError("Cannot read properties of undefined (reading 'x')"))).to.equal(false);
  });
});
