import type { ChainFamily } from './networks';

/**
 * The standard chain type of the price and candle services (spec, "Enumerations and
 * normalization"): a parser family, or a family no parser reads yet. Not a `ChainType`, which
 * names one network of the pipeline (`ethereum`, `solana`).
 */
export type StandardChainType = ChainFamily | 'cosmos' | 'move';

export const CHAIN_TYPES: readonly StandardChainType[] = ['evm', 'svm', 'tvm', 'utxo', 'cosmos', 'move'];

/**
 * Names clients use for a chain type (spec, "Enumerations and normalization"), plus the EVM
 * chains' own names, which callers send as readily as `ethereum`.
 */
const ALIASES: Readonly<Record<string, StandardChainType>> = {
  eth: 'evm',
  ethereum: 'evm',
  bsc: 'evm',
  bnb: 'evm',
  polygon: 'evm',
  matic: 'evm',
  arbitrum: 'evm',
  optimism: 'evm',
  base: 'evm',
  avalanche: 'evm',
  avax: 'evm',
  sol: 'svm',
  solana: 'svm',
  trx: 'tvm',
  tron: 'tvm',
  btc: 'utxo',
  bitcoin: 'utxo',
  ltc: 'utxo',
  litecoin: 'utxo',
  doge: 'utxo',
  dogecoin: 'utxo',
  bch: 'utxo',
  'bitcoin cash': 'utxo',
  bitcoincash: 'utxo',
  atom: 'cosmos',
  sui: 'move',
  aptos: 'move',
  apt: 'move',
};

/** A standard chain type or an alias, any case, trimmed; undefined when it names none. */
export function normalizeChainType(value: unknown): StandardChainType | undefined {
  if (typeof value !== 'string') return undefined;
  const v = value.trim().toLowerCase();
  if ((CHAIN_TYPES as readonly string[]).includes(v)) return v as StandardChainType;
  // Own keys only: `constructor` or `__proto__` is no alias.
  return Object.hasOwn(ALIASES, v) ? ALIASES[v] : undefined;
}

/** How a chain type compares contract addresses: EVM addresses are case-insensitive hex. */
export function addressKey(chainType: string, address: string): string {
  const a = address.trim();
  return chainType === 'evm' ? a.toLowerCase() : a;
}
