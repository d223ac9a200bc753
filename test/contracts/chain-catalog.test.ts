import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { changenowCurrency, thorAsset, type TokenRef } from '@chainpipe/aggregator';
import { CHAIN_CATALOG, chainSchemaEnums, mainnetOf, type CatalogChain } from '@chainpipe/chains';
import { SEED_CHAINS } from '@chainpipe/price';
import { NORMALIZED_TX_SCHEMA_OUT, NETWORK_SCHEMA_OUT, networkSchema, normalizedTxSchema } from '../../scripts/gen-chain-enums';
import { chainListsIn } from './chain-list-scan';

/**
 * The chain catalog (libs/chains/src/catalog.ts) is the one place a chain is written: the schema
 * enums are generated from it, the swap adapters take their names from it, the price reference
 * agrees with it, and no other source file holds a list of chains of its own but the stand-ins,
 * which state their provider's own (D156; apps/upstream-sim's tests check they agree).
 */
const ROOT = path.resolve(__dirname, '../..');
const CATALOG: readonly CatalogChain[] = CHAIN_CATALOG;

/**
 * Source files whose literals name several chains and are not chain lists, each with why. The
 * scan fails on any other such file, and on a file listed here that no longer needs to be.
 */
const NOT_CHAIN_LISTS: Readonly<Record<string, string>> = {
  'libs/chains/src/catalog.ts': 'the catalog itself',
  'libs/price/src/seed.ts': "the price reference's chains and their symbols (reference data, written to price.chains by a migration); the catalog cites each by its id, checked below",
  'apps/upstream-sim/src/chain-nodes/catalog.ts': "fixtures: which fixture files back which network (a new chain's fixtures come with their line)",
  'apps/upstream-sim/src/replay/fixture-batches.ts': 'fixtures: the fixture blocks `--all` replays',
  'libs/testing/src/chain-blocks.ts': 'fixtures: the fixture block of each family the tests take',
  'apps/upstream-sim/src/market/quotes-source.ts': "coin symbols of the quotes stand-in's assets (BTC, ETH, AVAX are coins here)",
  // The stand-ins state the providers' own names and chains, from the providers' documentation,
  // never from the code they stand in front of (D156); their tests check the catalog agrees.
  'apps/upstream-sim/src/swaps/changenow-router.ts': "the ChangeNOW stand-in: its currency tickers and the address form of ChangeNOW's networks (D156)",
  'apps/upstream-sim/src/swaps/payin-chains.ts': "the ChangeNOW stand-in: ChangeNOW's networks and the simulated chains they pay in on (D156)",
  'apps/upstream-sim/src/swaps/thorchain-sim.ts': "the THORChain stand-in: THORNode's chains, gas assets and rates, and the simulated networks it watches (D156)",
};

/** The TypeScript sources of the libs, apps and scripts (tests and migrations name chains as data). */
function sourceFiles(): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
      const full = path.join(dir, e.name);
      if (e.isDirectory()) return e.name === 'node_modules' || e.name === 'generated' ? [] : walk(full);
      return e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [full] : [];
    });
  const srcDirs = ['libs', 'apps'].flatMap((top) =>
    readdirSync(path.join(ROOT, top), { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => path.join(ROOT, top, e.name, 'src')),
  );
  return [...srcDirs.filter((d) => readdirSync(path.dirname(d)).includes('src')).flatMap(walk), ...walk(path.join(ROOT, 'scripts'))];
}

describe('one catalog of chains (libs/chains/src/catalog.ts)', () => {
  it('the schemas list exactly the catalog\'s networks and chain types (npm run gen writes them)', () => {
    const enums = chainSchemaEnums();
    const network = JSON.parse(readFileSync(NETWORK_SCHEMA_OUT, 'utf8'));
    const normalizedTx = JSON.parse(readFileSync(NORMALIZED_TX_SCHEMA_OUT, 'utf8'));
    expect(network.enum).to.deep.equal(enums.networks);
    expect(normalizedTx.properties.chain_type.enum).to.deep.equal(enums.chainTypes);
  });

  it('a row added to the catalog is in the generated schemas, the rest of each schema as it was', () => {
    const row: CatalogChain = { chain: 'testchain', family: 'evm', aliases: [], nativeSymbol: 'TST', nativeDecimals: 18, networks: [{ network: 'testchain-mainnet', chainId: 990990 }], providers: {} };
    const current = readFileSync(NORMALIZED_TX_SCHEMA_OUT, 'utf8');
    const withRow = JSON.parse(normalizedTxSchema(current, [...CATALOG, row]));
    expect(withRow.properties.chain_type.enum).to.deep.equal([...chainSchemaEnums().chainTypes, 'testchain']);
    expect({ ...withRow, properties: { ...withRow.properties, chain_type: undefined } }).to.deep.equal({ ...JSON.parse(current), properties: { ...JSON.parse(current).properties, chain_type: undefined } });
    expect(JSON.parse(networkSchema([...CATALOG, row])).enum).to.deep.equal([...chainSchemaEnums().networks, 'testchain-mainnet']);
  });

  it("the swap adapters name each chain of the price reference by the catalog's provider names, and refuse a chain the catalog gives them no name for", () => {
    for (const c of CATALOG) {
      if (c.referenceId === undefined) continue;
      const token: TokenRef = { id: c.referenceId * 100, chainId: c.referenceId, symbol: 'Usdt', contractAddress: null, decimals: 6 };
      if (c.providers.changenow) expect(changenowCurrency(token), c.chain).to.deep.equal({ currency: 'usdt', network: c.providers.changenow });
      else expect(() => changenowCurrency(token), c.chain).to.throw('no ChangeNOW network');
      if (c.providers.thorchain) expect(thorAsset(token), c.chain).to.equal(`${c.providers.thorchain}.USDT`);
      else expect(() => thorAsset(token), c.chain).to.throw('no THORChain chain');
    }
  });

  it('every chain of the price reference is a row of the catalog, of its family and, when monitored, its mainnet chain id', () => {
    for (const seed of SEED_CHAINS) {
      const row = CATALOG.find((c) => c.referenceId === seed.id);
      expect(row, `price reference chain ${seed.id} (${seed.name})`).to.not.equal(undefined);
      expect(row!.family, seed.name).to.equal(seed.chain_type);
      const mainnet = mainnetOf(row!);
      if (mainnet) expect(mainnet.chainId, seed.name).to.equal(seed.chain_id);
    }
    for (const c of CATALOG) if (c.referenceId !== undefined) expect(SEED_CHAINS.some((s) => s.id === c.referenceId), c.chain).to.equal(true);
  });

  it('no other source file holds a hand-written list of chains', () => {
    const flagged = new Map<string, string[]>();
    for (const file of sourceFiles()) {
      const hits = chainListsIn(readFileSync(file, 'utf8'), CATALOG);
      if (hits.length) flagged.set(path.relative(ROOT, file).split(path.sep).join('/'), hits.map((h) => `line ${h.line}: ${h.vocabulary} ${h.chains.join(', ')}`));
    }
    const lists = [...flagged].filter(([file]) => !(file in NOT_CHAIN_LISTS)).map(([file, hits]) => `${file}: ${hits.join('; ')}`);
    expect(lists, 'take these chains from the catalog (libs/chains), or list the file in NOT_CHAIN_LISTS with why it is no chain list').to.deep.equal([]);
    expect(Object.keys(NOT_CHAIN_LISTS).filter((file) => !flagged.has(file)), 'listed in NOT_CHAIN_LISTS but no longer naming several chains: take it out').to.deep.equal([]);
  });

  describe('the scan', () => {
    const scan = (source: string) => chainListsIn(source, CATALOG).map((h) => h.vocabulary);

    it('finds a table of networks, a map of provider names, a switch over chains and an array of chain types', () => {
      expect(scan("const N = [\n  { network: 'ethereum-mainnet', id: 1 },\n  { network: 'bsc-mainnet', id: 56 },\n  { network: 'tron-mainnet', id: 1 },\n];")).to.include('network names');
      expect(scan("const M = { 1: 'eth', 2: 'bsc', 3: 'matic' };")).to.include('changenow names');
      expect(scan('const T = { ETH: 3, BSC: 3, AVAX: 25 };')).to.include('thorchain names');
      expect(scan("switch (x) {\n  case 'solana':\n    return 1;\n  case 'tron':\n    return 2;\n  case 'bitcoin':\n    return 3;\n}")).to.include('chain names');
      expect(scan("type T = ['ethereum', 'bsc', 'polygon'];")).to.include('chain names');
    });

    it('leaves alone one or two chains in code, chains in comments, coin symbols and names spread over a function', () => {
      expect(scan("if (chain === 'ethereum' || chain === 'bsc') return 1;")).to.deep.equal([]);
      expect(scan("// ethereum, bsc and polygon: 'ethereum', 'bsc', 'polygon'\nconst a = 1;")).to.deep.equal([]);
      expect(scan("const symbols = ['BTC', 'ETH', 'USDT'];")).to.deep.equal([]);
      expect(scan("function f() {\n  if (a) { g('ethereum'); }\n  if (b) { g('solana'); }\n  if (c) { g('tron'); }\n}")).to.deep.equal([]);
    });
  });
});
