/**
 * The catalog of chains: the one place a chain is written down. Everything else that names
 * chains takes them from here: the pipeline's chain types and networks (networks.ts), the names
 * clients use (chain-types.ts), the schema enums of `common/network` and
 * `common/normalized-tx` (written by `npm run gen`, checked by `make test`), the swap adapters'
 * names for a chain (libs/aggregator) and the simulator's chains (apps/upstream-sim).
 *
 * Adding a chain is one row here, plus its parser (libs/tx-parsers, when its family is new) and
 * its fixtures; then `npm run gen`. See docs/development.md, "Add a chain".
 */

/** A parser family, and the canonical type of push bodies (`evm`, `svm`, `tvm`, `utxo`). */
export type ChainFamily = 'evm' | 'svm' | 'tvm' | 'utxo';

/**
 * The standard chain type of the price and candle services (spec, "Enumerations and
 * normalization"): a parser family, or a family no parser reads yet.
 */
export type StandardChainType = ChainFamily | 'cosmos' | 'move';

/** The families a parser of libs/tx-parsers reads. */
export const PARSER_FAMILIES: readonly ChainFamily[] = ['evm', 'svm', 'tvm', 'utxo'];

/** The standard chain types, parser families first. */
export const CHAIN_TYPES: readonly StandardChainType[] = [...PARSER_FAMILIES, 'cosmos', 'move'];

/** One network of a monitored chain. */
export interface CatalogNetwork {
  /** The streamer / RPC network name (`ethereum-mainnet`), lowercase. */
  readonly network: string;
  /** The protocol chain id (EIP-155 for EVM); Solana, Tron and Bitcoin mainnets are 1 (the spec's table). */
  readonly chainId: number;
  readonly testnet?: boolean;
  /**
   * Contracts of the network's wrapped native coin (WETH, WBNB, WPOL…), lowercase: their
   * `Deposit` / `Withdrawal` events are recorded as token transfers from / to the zero address.
   */
  readonly wrappedNativeTokens?: readonly string[];
}

/** The swap providers that name chains their own way. */
export type SwapProviderName = 'changenow' | 'thorchain';

/** One chain of the catalog. */
export interface CatalogChain {
  /**
   * Its lowercase name: the public `chain_type` of requests and records when the chain has
   * networks (`ethereum`), and a name clients may use for its family either way.
   */
  readonly chain: string;
  readonly family: StandardChainType;
  /** Other names clients use for the chain (`eth`, `matic`…), mapped to its family. */
  readonly aliases: readonly string[];
  /** Symbol and decimals of the native coin: amounts are stored in its smallest unit. */
  readonly nativeSymbol: string;
  readonly nativeDecimals: number;
  /** The id of its mainnet in the price reference (`price.chains.id`, libs/price seed); absent when it has none. */
  readonly referenceId?: number;
  /** An OP-stack chain: every network of it has the WETH predeploy. */
  readonly opStack?: boolean;
  /** The networks the address monitoring service parses; none for a chain only priced or swapped. */
  readonly networks: readonly CatalogNetwork[];
  /** Each swap provider's name for the chain (ChangeNOW's network, THORChain's chain prefix); absent where it has none. */
  readonly providers: Readonly<Partial<Record<SwapProviderName, string>>>;
}

/**
 * The chains. Row order is the order of the schema enums. Reference ids follow the price seed
 * (libs/price/src/seed.ts); provider names are those of the providers' APIs.
 */
export const CHAIN_CATALOG = [
  {
    chain: 'ethereum', family: 'evm', aliases: ['eth'], nativeSymbol: 'ETH', nativeDecimals: 18, referenceId: 1,
    networks: [
      { network: 'ethereum-mainnet', chainId: 1, wrappedNativeTokens: ['0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2'] }, // WETH9
      { network: 'ethereum-sepolia', chainId: 11155111, testnet: true, wrappedNativeTokens: ['0xfff9976782d46cc05630d1f6ebab18b2324d6b14'] }, // WETH9
    ],
    providers: { changenow: 'eth', thorchain: 'ETH' },
  },
  {
    chain: 'bsc', family: 'evm', aliases: ['bnb'], nativeSymbol: 'BNB', nativeDecimals: 18, referenceId: 2,
    networks: [
      { network: 'bsc-mainnet', chainId: 56, wrappedNativeTokens: ['0xbb4cdb9cbd36b01bd1cbaebf2de08d9173bc095c'] }, // WBNB
      { network: 'bsc-testnet', chainId: 97, testnet: true, wrappedNativeTokens: ['0xae13d989dac2f0debff460ac112a837c89baa7cd'] }, // WBNB
    ],
    providers: { changenow: 'bsc', thorchain: 'BSC' },
  },
  {
    chain: 'polygon', family: 'evm', aliases: ['matic'], nativeSymbol: 'POL', nativeDecimals: 18, referenceId: 3,
    networks: [
      { network: 'polygon-mainnet', chainId: 137, wrappedNativeTokens: ['0x0d500b1d8e8ef31e21c99d1db9a6444d3adf1270'] }, // WPOL (ex WMATIC)
      { network: 'polygon-amoy', chainId: 80002, testnet: true },
    ],
    providers: { changenow: 'matic' },
  },
  {
    chain: 'arbitrum', family: 'evm', aliases: [], nativeSymbol: 'ETH', nativeDecimals: 18, referenceId: 4,
    networks: [{ network: 'arbitrum-mainnet', chainId: 42161, wrappedNativeTokens: ['0x82af49447d8a07e3bd95bd0d56f35241523fbab1'] }], // WETH
    providers: { changenow: 'arbitrum', thorchain: 'ARB' },
  },
  {
    chain: 'optimism', family: 'evm', aliases: [], nativeSymbol: 'ETH', nativeDecimals: 18, referenceId: 5, opStack: true,
    networks: [{ network: 'optimism-mainnet', chainId: 10 }],
    providers: { changenow: 'op' },
  },
  {
    chain: 'base', family: 'evm', aliases: [], nativeSymbol: 'ETH', nativeDecimals: 18, referenceId: 6, opStack: true,
    networks: [{ network: 'base-mainnet', chainId: 8453 }],
    providers: { changenow: 'base', thorchain: 'BASE' },
  },
  {
    chain: 'solana', family: 'svm', aliases: ['sol'], nativeSymbol: 'SOL', nativeDecimals: 9, referenceId: 8,
    networks: [
      { network: 'solana-mainnet', chainId: 1 },
      { network: 'solana-devnet', chainId: 103, testnet: true },
    ],
    providers: { changenow: 'sol' },
  },
  {
    chain: 'tron', family: 'tvm', aliases: ['trx'], nativeSymbol: 'TRX', nativeDecimals: 6, referenceId: 9,
    networks: [{ network: 'tron-mainnet', chainId: 1 }],
    providers: { changenow: 'trx' },
  },
  {
    chain: 'bitcoin', family: 'utxo', aliases: ['btc'], nativeSymbol: 'BTC', nativeDecimals: 8, referenceId: 10,
    networks: [{ network: 'bitcoin-mainnet', chainId: 1 }],
    providers: { changenow: 'btc', thorchain: 'BTC' },
  },
  // Chains priced and swapped, not monitored: no networks.
  { chain: 'avalanche', family: 'evm', aliases: ['avax'], nativeSymbol: 'AVAX', nativeDecimals: 18, referenceId: 7, networks: [], providers: { changenow: 'cchain', thorchain: 'AVAX' } },
  { chain: 'cosmos', family: 'cosmos', aliases: ['atom'], nativeSymbol: 'ATOM', nativeDecimals: 6, referenceId: 11, networks: [], providers: { changenow: 'atom', thorchain: 'GAIA' } },
  { chain: 'sui', family: 'move', aliases: [], nativeSymbol: 'SUI', nativeDecimals: 9, referenceId: 12, networks: [], providers: { changenow: 'sui' } },
  { chain: 'aptos', family: 'move', aliases: ['apt'], nativeSymbol: 'APT', nativeDecimals: 8, referenceId: 13, networks: [], providers: { changenow: 'apt' } },
  // Names clients use for a family (spec, "Enumerations and normalization"): no networks, no reference row.
  { chain: 'litecoin', family: 'utxo', aliases: ['ltc'], nativeSymbol: 'LTC', nativeDecimals: 8, networks: [], providers: {} },
  { chain: 'dogecoin', family: 'utxo', aliases: ['doge'], nativeSymbol: 'DOGE', nativeDecimals: 8, networks: [], providers: {} },
  { chain: 'bitcoincash', family: 'utxo', aliases: ['bch', 'bitcoin cash'], nativeSymbol: 'BCH', nativeDecimals: 8, networks: [], providers: {} },
] as const satisfies readonly CatalogChain[];

type CatalogRow = (typeof CHAIN_CATALOG)[number];

/** The public chain types of the pipeline: the chains of the catalog that have networks (`ethereum`, `solana`…). */
export type ChainType = Extract<CatalogRow, { readonly networks: readonly [unknown, ...unknown[]] }>['chain'];

/** The network names of the catalog (`ethereum-mainnet`…). */
export type NetworkName = CatalogRow['networks'][number]['network'];

/** The catalog's chains that have networks, i.e. the pipeline's chain types. */
export function monitoredChains(catalog: readonly CatalogChain[] = CHAIN_CATALOG): CatalogChain[] {
  return catalog.filter((c) => c.networks.length > 0);
}

/**
 * The enums the schemas take from the catalog: `common/network` (every network, in row order)
 * and `common/normalized-tx`'s `chain_type` (every monitored chain).
 */
export function chainSchemaEnums(catalog: readonly CatalogChain[] = CHAIN_CATALOG): { networks: string[]; chainTypes: string[] } {
  const monitored = monitoredChains(catalog);
  return { networks: monitored.flatMap((c) => c.networks.map((n) => n.network)), chainTypes: monitored.map((c) => c.chain) };
}

/** A provider's name of each chain that has one and a reference id: price reference id → the provider's name. */
export function providerNamesByReferenceId(provider: SwapProviderName, catalog: readonly CatalogChain[] = CHAIN_CATALOG): ReadonlyMap<number, string> {
  const out = new Map<number, string>();
  for (const c of catalog) {
    const name = c.providers[provider];
    if (name !== undefined && c.referenceId !== undefined) out.set(c.referenceId, name);
  }
  return out;
}

/** The chain a provider calls `name` (exact spelling), if any. */
export function chainOfProviderName(provider: SwapProviderName, name: string, catalog: readonly CatalogChain[] = CHAIN_CATALOG): CatalogChain | undefined {
  return catalog.find((c) => c.providers[provider] === name);
}

/** The mainnet network of a chain (its first network that is no testnet); undefined for chains without networks. */
export function mainnetOf(chain: CatalogChain): CatalogNetwork | undefined {
  return chain.networks.find((n) => !n.testnet);
}

/**
 * Checks the catalog's rows against each other: unique chains, aliases, networks, reference ids
 * and provider names; lowercase names; a parser family for every chain with networks. Returns
 * what is wrong (empty when nothing).
 */
export function catalogProblems(catalog: readonly CatalogChain[] = CHAIN_CATALOG): string[] {
  const problems: string[] = [];
  const seen = new Map<string, string>();
  const once = (kind: string, key: string, owner: string) => {
    const k = `${kind}:${key}`;
    if (seen.has(k)) problems.push(`${kind} ${key} is claimed by ${seen.get(k)} and ${owner}`);
    else seen.set(k, owner);
  };
  for (const c of catalog) {
    for (const name of [c.chain, ...c.aliases]) {
      if (name !== name.trim().toLowerCase()) problems.push(`${c.chain}: name ${JSON.stringify(name)} is not lowercase and trimmed`);
      if ((CHAIN_TYPES as readonly string[]).includes(name) && name !== c.family) problems.push(`${c.chain}: name ${name} is another chain type`);
      once('name', name, c.chain);
    }
    if (c.networks.length > 0 && !(PARSER_FAMILIES as readonly string[]).includes(c.family)) problems.push(`${c.chain}: has networks but ${c.family} has no parser family`);
    if (c.referenceId !== undefined) once('reference id', String(c.referenceId), c.chain);
    for (const [provider, name] of Object.entries(c.providers)) once(`${provider} name`, String(name), c.chain);
    for (const n of c.networks) {
      if (n.network !== n.network.toLowerCase()) problems.push(`${c.chain}: network ${n.network} is not lowercase`);
      once('network', n.network, c.chain);
      once('chain id', `${c.chain}:${n.chainId}`, n.network);
    }
  }
  return problems;
}
