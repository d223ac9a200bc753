import { expect } from 'chai';
import { fieldErrorsOf, loadContracts } from '@chainpipe/contracts';

describe('fieldErrorsOf', () => {
  const contracts = loadContracts();
  const check = (id: string, value: unknown) => {
    const v = contracts.validator(id);
    return v(value) ? undefined : fieldErrorsOf(v.errors);
  };

  it('names missing, mistyped and out-of-range fields of a body', () => {
    const e = check('http/kline/pool-create', { chain_type: '', chain_id: 0, pool_address: 'x'.repeat(101), token: 'side' });
    expect(e?.formErrors).to.deep.equal([]);
    expect(Object.keys(e!.fieldErrors).sort()).to.deep.equal(['chain_id', 'chain_type', 'network_id', 'pool_address', 'token']);
    expect(e!.fieldErrors.network_id).to.deep.equal(['Required']);
    expect(e!.fieldErrors.token).to.deep.equal(['Expected one of: base, quote']);
    expect(check('http/kline/pool-create', [1])).to.deep.equal({ formErrors: ['Expected a JSON object'], fieldErrors: {} });
  });

  it('explains a pattern with the field description', () => {
    const e = check('http/kline/ohlcv-query', { interval: '1m', from: '1', to: '2', chain_type: 'evm', chain_id: '1', pool_address: 'p', limit: '5001' });
    expect(e?.fieldErrors).to.deep.equal({ limit: ['Expected an integer from 1 to 5000'] });
  });
});
