import { expect } from 'chai';
import { unlistedTokenReason } from '../src/reference.repository';

describe('unlistedTokenReason', () => {
  // spec aggregator-integrator.md, errors: `token not found` / `chain not found` for an internal id
  it('answers a stored token that is not listed (it or its chain switched off) as its chain not found', () => {
    expect(unlistedTokenReason(true)).to.equal('chain not found');
  });

  it('answers an id never stored as token not found', () => {
    expect(unlistedTokenReason(false)).to.equal('token not found');
  });
});
