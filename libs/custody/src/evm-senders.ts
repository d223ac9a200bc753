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
