import { chainOriginConfig } from '@chainpipe/chains';
import { bitcoinSenderConfig, gasStationConfig, signerConfig } from '@chainpipe/custody';
import { int } from '@chainpipe/runtime';
import { treasuryConfig } from './treasury-commands';

/**
 * What `treasury:sweep` and `gas:station` need besides the database: the treasury, the signer,
 * the chain origins and the station's warning level, checked before anything is read (the other
 * commands need only DATABASE_URL).
 */
export const sweepConfig = {
  ...treasuryConfig,
  ...signerConfig,
  GAS_STATION_LOW_BALANCE_GWEI: gasStationConfig.GAS_STATION_LOW_BALANCE_GWEI,
  GAS_STATION_LOW_BALANCE_TRX: gasStationConfig.GAS_STATION_LOW_BALANCE_TRX,
  ...chainOriginConfig,
  ...bitcoinSenderConfig,
  TRANSFER_CONFIRMATIONS: int({ default: 1, min: 1, max: 10_000, doc: 'confirmations (its own block included) before a sweep transfer shows confirmed' }),
};
