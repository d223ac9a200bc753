import { expect } from 'chai';
import { isDependencyUnavailable } from '../src/errors';

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
