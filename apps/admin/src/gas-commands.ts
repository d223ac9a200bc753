import { GAS_STATION_INDEX, stationLow } from '@chainpipe/custody';
import { UsageError, type Output } from './commands';

export const GAS_USAGE = `  gas:station
      the gas station: its address (the platform's EVM key of index ${GAS_STATION_INDEX}, which
      tops up token deposit addresses with the gas of their forwards, refunds and sweeps) and
      its balance on each EVM chain with an origin, LOW under GAS_STATION_LOW_BALANCE_GWEI.
      Fund it by sending the chain's native coin to the address. Needs the signer and the chain
      origins, as treasury:sweep
`;

export interface GasStationCommandDeps {
  station: { address: string; balance(chainType: string): Promise<bigint> };
  chainTypes: readonly string[];
  /** `LOW` below this balance (wei); 0: never. */
  warnBelowWei: bigint;
}

/** `gas:station`: where an operator funds the station, and what it holds. Exit 1 when a chain did not answer. */
export async function runGasCommand(argv: string[], deps: GasStationCommandDeps, io: Output): Promise<number> {
  const [command, ...rest] = argv;
  if (command !== 'gas:station') throw new UsageError(`unknown command ${command}`);
  if (rest.length > 0) throw new UsageError(`gas:station takes no arguments (got ${rest.join(' ')})`);
  io.out(`address\t${deps.station.address}\tindex ${GAS_STATION_INDEX}`);
  let failures = 0;
  for (const chainType of deps.chainTypes) {
    try {
      const wei = await deps.station.balance(chainType);
      io.out(`${chainType}\t${wei}\t${stationLow(wei, deps.warnBelowWei) ? 'LOW' : 'ok'}`);
    } catch (err) {
      failures += 1;
      io.out(`${chainType}\terror\t${(err as Error).message}`);
    }
  }
  return failures ? 1 : 0;
}
