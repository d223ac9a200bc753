import { expect } from 'chai';
import { chainsSql, historySql, withChainKeys } from '@chainpipe/tx-store';
import { normalizeMultiChain, normalizeSearch, type HistoryQuery, type Normalized } from '../src/queries/request';

function value<T>(n: Normalized<T>): T {
  if (!n.ok) throw new Error(`expected ok, got error: ${n.error}`);
  return n.value;
}

const ADDRESS = '0x' + 'ab'.repeat(20);
const TOKEN = '0x' + 'dac17f958d2ee523a2206206994597c13d831ec7';
const search = (body: Record<string, unknown>): HistoryQuery => value(normalizeSearch({ address: ADDRESS, ...body }));
/** Placeholders of a statement: every `?` is a binding (no jsonb `?` operator is used). */
const placeholders = (sql: string) => (sql.match(/\?/g) ?? []).length;

/**
 * The SQL of the history queries, built from fixed fragments (pure: no database). What the
 * statements return is tested against the real database in test/integration/tx-queries; here the
 * shape: which statements a request needs, one binding per placeholder, and which index each
 * filter walks.
 */
describe('queries repository: history statements', () => {
  const shapes: Record<string, HistoryQuery> = {
    'one chain': search({ chain_type: 'ethereum', chain_id: 1 }),
    'one chain, deep page, tx_type and token': search({ chain_type: 'ethereum', chain_id: 1, id: 99, tx_type: 'token', token: TOKEN }),
    'all chains': search({}),
    'all chains, tx_type': search({ tx_type: 'native' }),
    'all chains, token': search({ token: TOKEN, id: '12345678901234567' }),
    'chain_type only': search({ chain_type: 'polygon' }),
    'chain_id only, tx_type': search({ chain_id: 56, tx_type: 'token' }),
    'multi-chain': value(normalizeMultiChain({ addresses: [{ chain_type: 'ethereum', chain_id: 1, address: [ADDRESS] }, { chain_type: 'bsc', chain_id: 56, address: [ADDRESS] }] })),
  };

  it('needs a chains statement exactly when the walks go chain by chain but the request names no exact chain', () => {
    const needs = Object.fromEntries(Object.entries(shapes).map(([label, q]) => [label, chainsSql(q) !== null]));
    expect(needs).to.deep.equal({
      'one chain': false,
      'one chain, deep page, tx_type and token': false,
      'all chains': false,
      'all chains, tx_type': true,
      'all chains, token': true,
      'chain_type only': true,
      'chain_id only, tx_type': true,
      'multi-chain': false,
    });
  });

  it('binds one value per placeholder in every shape, in both statements', () => {
    for (const [label, q] of Object.entries(shapes)) {
      const chains = chainsSql(q);
      if (chains) {
        expect(placeholders(chains.sql), label).to.equal(chains.bindings.length);
        const resolved = withChainKeys(q, [
          { address: q.keys[0].address, chain_type: 'ethereum', chain_id: 1 },
          { address: q.keys[q.keys.length - 1].address, chain_type: 'bsc', chain_id: 56 },
        ]);
        const page = historySql(resolved);
        expect(placeholders(page.sql), label).to.equal(page.bindings.length);
      } else {
        const page = historySql(q);
        expect(placeholders(page.sql), label).to.equal(page.bindings.length);
      }
    }
  });

  it('the chains statement filters the chains found by the request\'s chain filter, bound as values', () => {
    const byType = chainsSql(shapes['chain_type only'])!;
    expect(byType.sql).to.match(/where c\.chain_type = \?$/);
    expect(byType.bindings).to.deep.equal([shapes['chain_type only'].keys.map((k) => k.address), 'polygon']);
    const byId = chainsSql(shapes['chain_id only, tx_type'])!;
    expect(byId.sql).to.match(/where c\.chain_id = \?$/);
    expect(byId.bindings.slice(1)).to.deep.equal([56]);
    expect(chainsSql(shapes['all chains, token'])!.sql).to.not.match(/where c\./);
  });

  it('walks the token index for a token filter and checks types on an index column, never in the record', () => {
    const token = historySql(shapes['one chain, deep page, tx_type and token']);
    expect(token.sql).to.match(/from tx\.address_token_index w/);
    expect(token.sql).to.match(/w\.token = tok\.token/);
    expect(token.sql).to.match(/w\.transfer_type = \?/);
    expect(token.bindings).to.deep.include.members([[TOKEN], 'token', '99']);
    const plain = historySql(shapes['one chain']);
    expect(plain.sql).to.match(/from tx\.address_index w/);
    for (const sql of [token.sql, plain.sql]) expect(sql).to.not.match(/record->>|tokens &&/);
  });

  it('with the chains resolved the walk is per chain; without them a filtered all-chains walk is refused', () => {
    const q = shapes['all chains, tx_type'];
    expect(() => historySql(q)).to.throw(/find the chains first/);
    const resolved = withChainKeys(q, [{ address: ADDRESS, chain_type: 'bsc', chain_id: 56 }]);
    expect(resolved.keys).to.deep.equal([{ address: ADDRESS, chainType: 'bsc', chainId: 56 }]);
    expect(resolved.transferType).to.equal('native');
    const page = historySql(resolved);
    expect(page.sql).to.match(/w\.chain_type = k\.chain_type and w\.chain_id = k\.chain_id/);
    expect(page.bindings.slice(0, 3)).to.deep.equal([[ADDRESS], ['bsc'], [56]]);
    // Unfiltered across chains: one walk per form, no chain columns.
    expect(historySql(shapes['all chains']).sql).to.not.match(/w\.chain_type/);
  });
});
