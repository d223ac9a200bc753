import { expect } from 'chai';
import { classifyStoreError, compactDbError, sqlState } from '../src';

const pgError = (code: string, message = 'x') => Object.assign(new Error(message), { code });

describe('tx-store classifyStoreError (pure)', () => {
  it('treats data exceptions, integrity violations and program limits as the data\'s fault', () => {
    expect(classifyStoreError(pgError('22003', 'value "1099511627776" is out of range for type integer'))).to.equal('data');
    expect(classifyStoreError(pgError('22001', 'value too long for type character varying(130)'))).to.equal('data');
    expect(classifyStoreError(pgError('22P05', 'unsupported Unicode escape sequence'))).to.equal('data');
    expect(classifyStoreError(pgError('23502', 'null value in column "tx_hash"'))).to.equal('data');
    expect(classifyStoreError(pgError('54000', 'index row size exceeds btree maximum'))).to.equal('data');
  });

  it('treats everything else as worth another try', () => {
    for (const code of ['40P01', '40001', '08006', '57P01', '53300', '55P03', '23505', 'XX000']) {
      expect(classifyStoreError(pgError(code)), code).to.equal('transient');
    }
    expect(classifyStoreError(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }))).to.equal('transient');
    expect(classifyStoreError(new Error('Knex: Timeout acquiring a connection'))).to.equal('transient');
    expect(classifyStoreError('not an error')).to.equal('transient');
    expect(classifyStoreError(null)).to.equal('transient');
  });

  it('reads only well-formed SQLSTATE codes', () => {
    expect(sqlState(pgError('22003'))).to.equal('22003');
    expect(sqlState({ code: 'ECONNRESET' })).to.equal(undefined);
    expect(sqlState({ code: 22003 })).to.equal(undefined);
  });
});

describe('tx-store compactDbError (pure)', () => {
  it('keeps the driver\'s message and SQLSTATE, drops the statement knex put in front of it', () => {
    const statement = `INSERT INTO tx.transactions (…) VALUES ${"('ethereum', 1, '0xabc', '{\"huge\": \"record - with dashes\"}'), ".repeat(5000)}`;
    const raw = Object.assign(new Error(`${statement} - value "1099511627776" is out of range for type integer`), { code: '22003' });
    const e = compactDbError(raw) as Error & { code?: string };
    expect(e.message).to.equal('value "1099511627776" is out of range for type integer (code 22003)');
    expect(e.code).to.equal('22003');
    expect(e.cause).to.equal(raw);
    expect(classifyStoreError(e)).to.equal('data');
  });

  it('names table and column when the driver gives them, caps the length, keeps non-errors as they are', () => {
    const raw = Object.assign(new Error('null value in column "tx_hash" violates not-null constraint'), { code: '23502', table: 'transactions', column: 'tx_hash' });
    expect((compactDbError(raw) as Error).message).to.equal('null value in column "tx_hash" violates not-null constraint (code 23502, table transactions, column tx_hash)');
    const long = compactDbError(new Error('x'.repeat(5000))) as Error;
    expect(long.message).to.have.length(500);
    expect(classifyStoreError(long)).to.equal('transient');
    expect(compactDbError('boom')).to.equal('boom');
    const once = compactDbError(raw);
    expect(compactDbError(once)).to.equal(once);
  });
});
