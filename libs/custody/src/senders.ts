import type { ChainOrigins } from '@chainpipe/chains';
import { bitcoinSendersByChainType } from './bitcoin-sender';
import { bitcoinSenderOptions } from './config';
import { evmSendersByChainType } from './evm-senders';
import type { Signer } from './signer';
import { solanaSenderOf } from './solana-transaction';
import { tronSendersByChainType } from './tron-transaction';

/**
 * The senders of deposit addresses of every family, by chain type (EVM chains, Bitcoin, Tron,
 * Solana), each on its mainnet through its configured origin (deposits are seen on the monitored
 * mainnets); `evm` and `tron` apart for the gas station, which serves those. One composition for
 * the apps that move funds (order-executor, the admin's money commands).
 */
export function sendersByChainType(origins: ChainOrigins, signer: Signer, config: { BITCOIN_FEE_CONF_TARGET: number; BITCOIN_MIN_FEE_RATE_SAT_VB: number; CHAIN_RPC_TIMEOUT_MS: number }) {
  const evm = evmSendersByChainType(origins, signer, config.CHAIN_RPC_TIMEOUT_MS);
  const bitcoin = bitcoinSendersByChainType(origins, signer, bitcoinSenderOptions(config));
  const tron = tronSendersByChainType(origins, signer, config.CHAIN_RPC_TIMEOUT_MS);
  const solana = solanaSenderOf(origins, signer, config.CHAIN_RPC_TIMEOUT_MS);
  const all = (chainType: string) => evm(chainType) ?? bitcoin(chainType) ?? tron(chainType) ?? (chainType === 'solana' ? solana : undefined);
  return { evm, tron, all };
}
