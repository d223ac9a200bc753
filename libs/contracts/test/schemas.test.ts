import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { TOPICS, dlqName, loadContracts } from '@chainpipe/contracts';
import { emptyTx } from '@chainpipe/tx-parsers';

describe('contracts', () => {
  const contracts = loadContracts();

  it('compiles every schema of schemas/ and has one for every registry topic', () => {
    expect(contracts.ids.length).to.be.greaterThan(5);
    for (const spec of Object.values(TOPICS)) expect(contracts.has(spec.schema), spec.name).to.equal(true);
    expect(dlqName('chain.raw.v1')).to.equal('chain.raw.v1.dlq');
  });

  it('validates a chain.tx.v1 message through its $ref to the normalized record', () => {
    const tx = { ...emptyTx({ chainType: 'ethereum', chainId: 1, nativeSymbol: 'ETH', nativeDecimals: 18 }, '0x1'), amount: '10' };
    // Every field of the record is required (null when unknown): a record missing one is refused.
    const { nonce: _dropped, ...incomplete } = tx;
    expect(contracts.validate('common/normalized-tx', incomplete)).to.deep.equal({ ok: false, errors: 'nonce is required' });
    expect(contracts.validate('kafka/chain.tx.v1', { id: '1', network: 'ethereum-mainnet', is_reorg_resend: false, tx })).to.deep.equal({ ok: true });
    const bad = contracts.validate('kafka/chain.tx.v1', { id: '1', network: 'x', is_reorg_resend: false, tx: { ...tx, amount: '1.5' } });
    expect(bad.ok).to.equal(false);
    if (!bad.ok) expect(bad.errors).to.match(/tx\.amount/);
  });

  it('decimalMaximum bounds a digit string by its column, past 2^53 too, and leaves other shapes to pattern', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'schemas-'));
    mkdirSync(path.join(dir, 'http'));
    const bound = (limit: string) => ({ type: 'string', decimalMaximum: limit });
    const schema = { $id: 'http/ids', type: 'object', properties: { id: bound('2147483647'), big: bound('9223372036854775807') } };
    writeFileSync(path.join(dir, 'http', 'ids.json'), JSON.stringify(schema));
    const own = loadContracts(dir);
    expect(own.validate('http/ids', { id: '2147483647', big: '9223372036854775807' })).to.deep.equal({ ok: true });
    expect(own.validate('http/ids', { id: ' 2147483648 ' })).to.deep.equal({ ok: false, errors: 'id must be <= 2147483647' });
    expect(own.validate('http/ids', { big: '9223372036854775808' })).to.deep.equal({ ok: false, errors: 'big must be <= 9223372036854775807' });
    expect(own.validate('http/ids', { id: 'abc', big: '-1' })).to.deep.equal({ ok: true });
  });

  it('fails at load, naming the schema, when a $ref does not resolve or an $id does not match its path', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'schemas-'));
    mkdirSync(path.join(dir, 'kafka'));
    writeFileSync(path.join(dir, 'kafka/a.json'), JSON.stringify({ $id: 'kafka/a', type: 'object', properties: { x: { $ref: 'common/missing' } } }));
    expect(() => loadContracts(dir)).to.throw(/missing/);
    writeFileSync(path.join(dir, 'kafka/a.json'), JSON.stringify({ $id: 'kafka/b', type: 'object' }));
    expect(() => loadContracts(dir)).to.throw(/must have \$id "kafka\/a"/);
  });
});
