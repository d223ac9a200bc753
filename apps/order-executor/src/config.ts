import { channelAdaptersConfig } from '@chainpipe/aggregator';
import { CHAINS, chainOriginConfig, type ChainType } from '@chainpipe/chains';
import { bitcoinSenderConfig, depositKeysConfig, gasStationConfig, signerConfig } from '@chainpipe/custody';
import { dbConfig } from '@chainpipe/db';
import { int, type Field } from '@chainpipe/runtime';

/** The chain types the executor sends on: every EVM chain, Bitcoin (P2WPKH deposit addresses), Solana and Tron. */
const SENDING_CHAIN_TYPES = Object.values(CHAINS)
  .filter((c) => c.family === 'evm' || c.family === 'svm' || c.family === 'tvm' || c.chainType === 'bitcoin')
  .map((c) => c.chainType);

/**
 * Confirmations per chain type, `chain=n` pairs (`ethereum=12,bsc=15`): how many blocks, its own
 * included, a deposit needs before its funds are forwarded, and an outgoing transfer before it
 * counts as confirmed (Solana: slots). Chains not listed take ORDER_EXECUTOR_CONFIRMATIONS_DEFAULT.
 * Only chains the executor sends on (EVM, Bitcoin, Solana, Tron) are accepted; anything else stops the boot.
 */
export function confirmationsField(doc: string): Field<Readonly<Partial<Record<ChainType, number>>>> {
  return {
    kind: 'map',
    doc,
    secret: false,
    parse(raw) {
      const map: Partial<Record<ChainType, number>> = {};
      for (const pair of (raw ?? '').split(',').map((s) => s.trim()).filter(Boolean)) {
        const m = /^([a-z0-9]+)=([0-9]+)$/.exec(pair.toLowerCase());
        if (!m) return { error: `entry ${JSON.stringify(pair)} is not chain=confirmations` };
        const [, chain, n] = m;
        if (!(SENDING_CHAIN_TYPES as string[]).includes(chain)) return { error: `names ${chain}, not a chain the executor sends on (${SENDING_CHAIN_TYPES.join(', ')})` };
        const count = Number(n);
        if (count < 1 || count > 10_000) return { error: `${chain}: confirmations must be 1…10000, got ${n}` };
        if (map[chain as ChainType] !== undefined) return { error: `names ${chain} twice` };
        map[chain as ChainType] = count;
      }
      return { value: map };
    },
  };
}

export const orderExecutorConfig = {
  ...dbConfig,
  ...channelAdaptersConfig,
  ...chainOriginConfig,
  ...signerConfig,
  // the gateway's deposit keys: the signer must control them (checked at boot)
  ...depositKeysConfig,
  ...gasStationConfig,
  ...bitcoinSenderConfig,
  ORDER_EXECUTOR_INTERVAL_MS: int({ default: 2000, min: 50, doc: 'period of a pass: stored transfers re-broadcast and followed, paid orders forwarded' }),
  ORDER_EXECUTOR_BATCH: int({ default: 50, min: 1, max: 1000, doc: 'orders (and open transfers) per pass' }),
  ORDER_EXECUTOR_CONFIRMATIONS: confirmationsField('confirmations per chain, chain=n pairs (ethereum=12,bsc=15): blocks, its own included, a deposit needs before it is forwarded and a sent transfer before it counts as confirmed'),
  ORDER_EXECUTOR_CONFIRMATIONS_DEFAULT: int({ default: 12, min: 1, max: 10_000, doc: 'confirmations of chains ORDER_EXECUTOR_CONFIRMATIONS does not list' }),
  ORDER_EXECUTOR_DEPOSIT_EXPIRY_SEC: int({ default: 900, min: 60, max: 86_400, doc: "how long a router deposit stays valid (depositWithExpiry's expiration, as THORNode's quotes give 15 minutes)" }),
};
