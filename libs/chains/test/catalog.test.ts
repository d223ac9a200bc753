import { expect } from 'chai';
import {
  CHAIN_CATALOG,
  CHAINS,
  NETWORKS,
  catalogProblems,
  chainOfProviderName,
  chainSchemaEnums,
  chainTypeAliases,
  mainnetOf,
  monitoredChains,
  providerNamesByReferenceId,
  type CatalogChain,
} from '../src';

/** A chain that is no real one, added the way a new chain is: one row. */
const TEST_ROW: CatalogChain = {
  chain: 'testchain',
  family: 'evm',
  aliases: ['tst'],
  nativeSymbol: 'TST',
  nativeDecimals: 18,
  referenceId: 990,
  networks: [
    { network: 'testchain-mainnet', chainId: 990990 },
    { network: 'testchain-devnet', chainId: 990991, testnet: true },
  ],
  providers: { changenow: 'tstnet', thorchain: 'TST' },
};
const WITH_TEST_ROW: readonly CatalogChain[] = [...CHAIN_CATALOG, TEST_ROW];

describe('chain catalog (libs/chains/src/catalog.ts)', () => {
  it('its rows agree with each other: unique names, networks, reference ids and provider names', () => {
    expect(catalogProblems()).to.deep.equal([]);
  });

  it('names a row claiming what another row has, and a chain with networks but no parser family', () => {
    const dup: CatalogChain = { ...TEST_ROW, aliases: ['eth'], referenceId: 1, networks: [{ network: 'ethereum-mainnet', chainId: 7 }], providers: { thorchain: 'BTC' } };
    const problems = catalogProblems([...CHAIN_CATALOG, dup]);
    expect(problems.join('\n')).to.include('name eth').and.include('reference id 1').and.include('network ethereum-mainnet').and.include('thorchain name BTC');
    expect(catalogProblems([...CHAIN_CATALOG, { ...TEST_ROW, family: 'move' }]).join('\n')).to.include('no parser family');
  });

  it('CHAINS and NETWORKS are its chains with networks, each network once with its chain', () => {
    const monitored = monitoredChains();
    expect(Object.keys(CHAINS)).to.deep.equal(monitored.map((c) => c.chain));
    expect(NETWORKS.map((n) => n.network)).to.deep.equal(monitored.flatMap((c) => c.networks.map((n) => n.network)));
    for (const c of monitored) {
      for (const n of c.networks) {
        const info = NETWORKS.find((x) => x.network === n.network)!;
        expect(info, n.network).to.include({ chainType: c.chain, family: c.family, chainId: n.chainId, testnet: n.testnet ?? false, nativeSymbol: c.nativeSymbol });
      }
    }
  });

  describe('a chain added as one row reaches everything taken from the catalog', () => {
    it('the schema enums: its networks and its chain type', () => {
      const enums = chainSchemaEnums(WITH_TEST_ROW);
      expect(enums.networks).to.include.members(['testchain-mainnet', 'testchain-devnet']);
      expect(enums.chainTypes).to.include('testchain');
      expect(enums.networks.length).to.equal(chainSchemaEnums().networks.length + 2);
    });

    it("each provider's name of it by its reference id, and back", () => {
      expect(providerNamesByReferenceId('changenow', WITH_TEST_ROW).get(990)).to.equal('tstnet');
      expect(providerNamesByReferenceId('thorchain', WITH_TEST_ROW).get(990)).to.equal('TST');
      expect(chainOfProviderName('changenow', 'tstnet', WITH_TEST_ROW)?.chain).to.equal('testchain');
      expect(mainnetOf(TEST_ROW)?.network).to.equal('testchain-mainnet');
    });

    it('the names clients use: its name and aliases normalize to its family', () => {
      const aliases = chainTypeAliases(WITH_TEST_ROW);
      expect(aliases.testchain).to.equal('evm');
      expect(aliases.tst).to.equal('evm');
    });

    it('its row passes the catalog check', () => {
      expect(catalogProblems(WITH_TEST_ROW)).to.deep.equal([]);
    });
  });

  it('a chain without networks is priced and swapped, not a chain type of the pipeline', () => {
    const unmonitored: CatalogChain = { ...TEST_ROW, networks: [] };
    const catalog = [...CHAIN_CATALOG, unmonitored];
    expect(chainSchemaEnums(catalog)).to.deep.equal(chainSchemaEnums());
    expect(monitoredChains(catalog).map((c) => c.chain)).not.to.include('testchain');
    expect(providerNamesByReferenceId('thorchain', catalog).get(990)).to.equal('TST');
    expect(chainTypeAliases(catalog).tst).to.equal('evm');
    for (const c of CHAIN_CATALOG as readonly CatalogChain[]) expect(Object.keys(CHAINS).includes(c.chain), c.chain).to.equal(c.networks.length > 0);
  });
});
