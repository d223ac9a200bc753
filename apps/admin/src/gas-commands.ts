import { GAS_STATION_INDEX, stationLow } from '@chainpipe/custody';
import { UsageError, type Output } from './commands';

export const GAS_USAGE = `  gas:station
      the gas station: its addresses (the platform's EVM and Tron keys of index ${GAS_STATION_INDEX},
      which top up token deposit addresses with the gas of their forwards, refunds and sweeps)
      and its balance on each EVM chain and Tron with an origin (wei, sun), LOW under
      GAS_STATION_LOW_BALANCE_GWEI (Tron: GAS_STATION_LOW_BALANCE_TRX). Fund it by sending the
      chain's native coin to its address there. Needs the signer and the chain origins, as
      treasury:sweep
`;

export interface GasStationCommandDeps {
  station: { addressOn(chainType: string): string | undefined; balance(chainType: string): Promise<bigint> };
  chainTypes: readonly string[];
  /** `LOW` below this balance on a chain type (its smallest unit: wei, sun); 0: never. */
  warnBelow(chainType: string): bigint;
}

/** `gas:station`: where an operator funds the station, and what it holds. Exit 1 when a chain did not answer. */
export async function runGasCommand(argv: string[], deps: GasStationCommandDeps, io: Output): Promise<number> {
  const [command, ...rest] = argv;
  if (command !== 'gas:station') throw new UsageError(`unknown command ${command}`);
  if (rest.length > 0) throw new UsageError(`gas:station takes no arguments (got ${rest.join(' ')})`);
  io.out(`index\t${GAS_STATION_INDEX}`);
  let failures = 0;
  for (const chainType of deps.chainTypes) {
    try {
      const held = await deps.station.balance(chainType);
      io.out(`${chainType}\t${held}\t${stationLow(held, deps.warnBelow(chainType)) ? 'LOW' : 'ok'}\t${deps.station.addressOn(chainType)}`);
    } catch (err) {
      failures += 1;
      io.out(`${chainType}\terror\t${(err as Error).message}`);
    }
  }
  return failures ? 1 : 0;
}
