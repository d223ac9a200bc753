import { expect } from 'chai';
import { parsePoolRef, parseTradesLimit } from '../src/management/dex-pools';

describe('pool trades requests (pure)', () => {
  it('takes both spellings of chain type and id, lowercases the chain and stores the canonical address', () => {
    const pool = '0xB4E16D0168E52D35CACD2C6185B44281EC28C9DC';
    expect(parsePoolRef({ chainType: 'Ethereum', chainId: '1' }, pool)).to.deep.equal({ ok: true, value: { chainType: 'ethereum', chainId: 1, pool: pool.toLowerCase() } });
    expect(parsePoolRef({ chain_type: 'bsc', chain_id: 56 }, pool)).to.deep.equal({ ok: true, value: { chainType: 'bsc', chainId: 56, pool: pool.toLowerCase() } });
  });

  it('refuses missing or unknown chains, unsupported networks and bad addresses with a message naming the field', () => {
    expect(parsePoolRef({}, '0x1')).to.deep.equal({ ok: false, error: 'chainType is required' });
    expect(parsePoolRef({ chainType: 'doge', chainId: 1 }, '0x1')).to.have.property('ok', false);
    expect(parsePoolRef({ chainType: 'ethereum' }, '0x1')).to.deep.equal({ ok: false, error: 'chainId is required and must be an integer' });
    expect(parsePoolRef({ chainType: 'ethereum', chainId: 999 }, '0x1')).to.have.property('ok', false);
    const bad = parsePoolRef({ chainType: 'ethereum', chainId: 1 }, '0x1');
    expect(bad.ok).to.equal(false);
    if (!bad.ok) expect(bad.error).to.match(/^poolAddress /);
  });

  it('limit: default 100, 1 to 100', () => {
    expect(parseTradesLimit(undefined)).to.deep.equal({ ok: true, value: 100 });
    expect(parseTradesLimit('7')).to.deep.equal({ ok: true, value: 7 });
    for (const bad of ['0', '101', 'x', '1.5', ['1']]) expect(parseTradesLimit(bad).ok, String(bad)).to.equal(false);
  });
});
