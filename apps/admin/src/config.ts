import { chainOriginConfig } from '@chainpipe/chains';
import { signerConfig } from '@chainpipe/custody';
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
  TRANSFER_CONFIRMATIONS: int({ default: 1, min: 0, max: 1000, doc: 'blocks on top of a sweep transfer before the sweep shows it confirmed' }),
};
