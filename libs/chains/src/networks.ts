import type { Network } from '@chainpipe/contracts';

/**
 * Chains and networks the address monitoring service understands.
 *
 * `chain_type` is the lowercase public name used in requests and records (`ethereum`, `solana`…);
 * `family` is the parser family and the canonical type of push bodies (`evm`, `svm`, `tvm`, `utxo`).
 * A network name (`ethereum-mainnet`) is what streamers send in `cl-stream-network` /
 * `stream-network` and what callers send in `x-chain-net`.
 */

export type ChainFamily = 'evm' | 'svm' | 'tvm' | 'utxo';

export type ChainType =
  | 'ethereum'
  | 'bsc'
  | 'polygon'
  | 'arbitrum'
  | 'optimism'
  | 'base'
  | 'solana'
  | 'tron'
  | 'bitcoin';

export interface ChainInfo {
  chainType: ChainType;
  family: ChainFamily;
  /** Symbol and decimals of the native coin: amounts are stored in its smallest unit. */
  nativeSymbol: string;
  nativeDecimals: number;
}

export interface NetworkInfo extends ChainInfo {
  /** The streamer / RPC network name, e.g. `ethereum-mainnet`. */
  network: string;
  chainId: number;
  testnet: boolean;
  /**
   * Contracts of the network's wrapped native coin (WETH, WBNB, WPOL…), lowercase: their
   * `Deposit` / `Withdrawal` events are recorded as token transfers from / to the zero address,
   * as explorers show them. Empty where the family has no such events or none is listed.
   */
  wrappedNativeTokens: readonly string[];
}

export const CHAINS: Readonly<Record<ChainType, ChainInfo>> = {
  ethereum: { chainType: 'ethereum', family: 'evm', nativeSymbol: 'ETH', nativeDecimals: 18 },
  bsc: { chainType: 'bsc', family: 'evm', nativeSymbol: 'BNB', nativeDecimals: 18 },
  polygon: { chainType: 'polygon', family: 'evm', nativeSymbol: 'POL', nativeDecimals: 18 },
  arbitrum: { chainType: 'arbitrum', family: 'evm', nativeSymbol: 'ETH', nativeDecimals: 18 },
  optimism: { chainType: 'optimism', family: 'evm', nativeSymbol: 'ETH', nativeDecimals: 18 },
  base: { chainType: 'base', family: 'evm', nativeSymbol: 'ETH', nativeDecimals: 18 },
  solana: { chainType: 'solana', family: 'svm', nativeSymbol: 'SOL', nativeDecimals: 9 },
  tron: { chainType: 'tron', family: 'tvm', nativeSymbol: 'TRX', nativeDecimals: 6 },
  bitcoin: { chainType: 'bitcoin', family: 'utxo', nativeSymbol: 'BTC', nativeDecimals: 8 },
};

/** One network of the list: its name must be one of schemas/common/network.json (a network added here alone fails the typecheck). */
function net(network: Network, chainType: ChainType, chainId: number, testnet = false, wrappedNativeTokens: readonly string[] = []): NetworkInfo {
  return { ...CHAINS[chainType], network, chainId, testnet, wrappedNativeTokens };
}

/** The OP-stack WETH predeploy (same address on every OP-stack chain). */
const OP_STACK_WETH = '0x4200000000000000000000000000000000000006';

/**
 * The networks of the spec. Mainnet chain ids follow the spec's table (Solana, Tron and Bitcoin
 * mainnets are chain_id 1); test networks use their conventional ids.
 */
export const NETWORKS: readonly NetworkInfo[] = [
  net('ethereum-mainnet', 'ethereum', 1, false, ['0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2']), // WETH9
  net('ethereum-sepolia', 'ethereum', 11155111, true, ['0xfff9976782d46cc05630d1f6ebab18b2324d6b14']), // WETH9
  net('bsc-mainnet', 'bsc', 56, false, ['0xbb4cdb9cbd36b01bd1cbaebf2de08d9173bc095c']), // WBNB
  net('bsc-testnet', 'bsc', 97, true, ['0xae13d989dac2f0debff460ac112a837c89baa7cd']), // WBNB
  net('polygon-mainnet', 'polygon', 137, false, ['0x0d500b1d8e8ef31e21c99d1db9a6444d3adf1270']), // WPOL (ex WMATIC)
  net('polygon-amoy', 'polygon', 80002, true),
  net('solana-mainnet', 'solana', 1),
  net('solana-devnet', 'solana', 103, true),
  net('tron-mainnet', 'tron', 1),
  net('bitcoin-mainnet', 'bitcoin', 1),
  net('arbitrum-mainnet', 'arbitrum', 42161, false, ['0x82af49447d8a07e3bd95bd0d56f35241523fbab1']), // WETH
  net('optimism-mainnet', 'optimism', 10, false, [OP_STACK_WETH]),
  net('base-mainnet', 'base', 8453, false, [OP_STACK_WETH]),
];

const BY_NETWORK = new Map(NETWORKS.map((n) => [n.network, n]));
const BY_CHAIN = new Map(NETWORKS.map((n) => [`${n.chainType}:${n.chainId}`, n]));

/** Looks a network up by its streamer name; case and surrounding blanks are ignored. */
export function networkByName(name: string | undefined | null): NetworkInfo | undefined {
  if (typeof name !== 'string') return undefined;
  return BY_NETWORK.get(name.trim().toLowerCase());
}

export function networkByChain(chainType: string, chainId: number): NetworkInfo | undefined {
  return BY_CHAIN.get(`${chainType.toLowerCase()}:${chainId}`);
}

/** Normalizes a request's `chain_type` (case-insensitive); undefined when it is not supported. */
export function parseChainType(value: unknown): ChainType | undefined {
  if (typeof value !== 'string') return undefined;
  const v = value.trim().toLowerCase();
  return (Object.prototype.hasOwnProperty.call(CHAINS, v) ? v : undefined) as ChainType | undefined;
}

export function chainInfo(chainType: ChainType): ChainInfo {
  return CHAINS[chainType];
}

/**
 * The wrapped native coin contracts of a chain (lowercase). OP-stack chains that are not one of
 * the listed networks (e.g. a testnet) still get their WETH predeploy.
 */
export function wrappedNativeTokens(chainType: ChainType, chainId: number): readonly string[] {
  const listed = networkByChain(chainType, chainId);
  if (listed) return listed.wrappedNativeTokens;
  return chainType === 'optimism' || chainType === 'base' ? [OP_STACK_WETH] : [];
}

/**
 * The monitored network of a chain of the price reference (`price.chains`: its `chain_type` is a
 * family, `evm`…, and its protocol chain id): Ethereum 1 → ethereum-mainnet, Solana 1 →
 * solana-mainnet. Undefined for chains the address monitoring service does not parse.
 */
export function networkOfReferenceChain(family: string, chainId: number | string | null): NetworkInfo | undefined {
  if (chainId === null) return undefined;
  const id = Number(chainId);
  return NETWORKS.find((n) => n.family === family && n.chainId === id && !n.testnet);
}
