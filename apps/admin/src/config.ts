import { chainOriginConfig } from '@chainpipe/chains';
import { bitcoinSenderConfig, signerConfig } from '@chainpipe/custody';
import { int } from '@chainpipe/runtime';
import { treasuryConfig } from './treasury-commands';

/**
 * What `treasury:sweep` needs besides the database: the treasury, the signer and the chain
 * origins, checked before anything is read (the other commands need only DATABASE_URL).
 */
export const sweepConfig = {
  ...treasuryConfig,
  ...signerConfig,
  ...chainOriginConfig,
  ...bitcoinSenderConfig,
  TRANSFER_CONFIRMATIONS: int({ default: 1, min: 1, max: 10_000, doc: 'confirmations (its own block included) before a sweep transfer shows confirmed' }),
};
