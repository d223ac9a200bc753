import { CHAIN_CATALOG, CHAIN_TYPES, type CatalogChain, type StandardChainType } from './catalog';


/**
 * Names clients use for a chain type (spec, "Enumerations and normalization"): every chain of
 * the catalog by its name and its aliases, mapped to its family. `StandardChainType` is not a
 * `ChainType`, which names one chain of the pipeline (`ethereum`, `solana`).
 */
export function chainTypeAliases(catalog: readonly CatalogChain[] = CHAIN_CATALOG): Readonly<Record<string, StandardChainType>> {
  return Object.fromEntries(catalog.flatMap((c) => [c.chain, ...c.aliases].map((name) => [name, c.family])));
}

const ALIASES = chainTypeAliases();

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
