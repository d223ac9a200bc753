import { NETWORKS, type ChainOrigins } from '@chainpipe/chains';
import { EvmSender } from './evm-transaction';
import type { Signer } from './signer';

/**
 * The EVM senders of deposit addresses by chain type (`ethereum`, `bsc`…): the mainnet network of
 * the chain type (deposits are seen on the monitored mainnets) through its configured origin.
 * Undefined for a chain type of another family, or without an origin.
 */
export function evmSendersByChainType(origins: ChainOrigins, signer: Signer, timeoutMs: number): (chainType: string) => EvmSender | undefined {
  const senders = new Map<string, EvmSender>();
  for (const n of NETWORKS) {
    if (n.family !== 'evm' || n.testnet || senders.has(n.chainType)) continue;
    const origin = origins.urlFor(n.network);
    if (origin) senders.set(n.chainType, new EvmSender({ url: origin, chainId: n.chainId, timeoutMs }, signer));
  }
  return (chainType) => senders.get(chainType);
}

/** The chain types of `families` a sender is configured for (their mainnet has an origin), in `NETWORKS` order. */
export function chainTypesWithOrigin(origins: ChainOrigins, families: readonly string[]): string[] {
  const types: string[] = [];
  for (const n of NETWORKS) if (families.includes(n.family) && !n.testnet && !types.includes(n.chainType) && origins.urlFor(n.network)) types.push(n.chainType);
  return types;
}
