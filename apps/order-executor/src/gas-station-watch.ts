import { Gauge, type Registry } from 'prom-client';
import { stationLow } from '@chainpipe/custody';
import { errorMessage, type Logger } from '@chainpipe/runtime';

export interface GasStationWatchDeps {
  station: { addressOn(chainType: string): string | undefined; balance(chainType: string): Promise<bigint> };
  chainTypes: readonly string[];
  /** Warn below this balance on a chain type (its smallest unit: wei, sun); 0: never. */
  warnBelow(chainType: string): bigint;
  logger: Logger;
  registry: Registry;
}

/**
 * The gas station's balance on each EVM chain and Tron, for the operator who funds it: the gauge
 * `chainpipe_agg_gas_station_balance` (the native coin's smallest unit: wei, sun) and a `gas_station_low` warning under the configured
 * level. A chain whose origin does not answer keeps its last value and is tried next time.
 */
export class GasStationWatch {
  private readonly balance: Gauge<'chain_type'>;
  private readonly log: Logger;

  constructor(private readonly deps: GasStationWatchDeps) {
    this.log = deps.logger.child({ component: 'gas-station' });
    this.balance = new Gauge({ name: 'chainpipe_agg_gas_station_balance', help: "The gas station's balance (smallest unit of the chain's native coin: wei, sun on Tron) by chain type: what it tops up token deposit addresses with", labelNames: ['chain_type'], registers: [deps.registry] });
  }

  async check(): Promise<void> {
    for (const chainType of this.deps.chainTypes) {
      try {
        const held = await this.deps.station.balance(chainType);
        this.balance.set({ chain_type: chainType }, Number(held));
        const warnBelow = this.deps.warnBelow(chainType);
        if (stationLow(held, warnBelow)) this.log.warn({ msg: 'gas_station_low', chainType, address: this.deps.station.addressOn(chainType), balance: held.toString(), warnBelow: warnBelow.toString() });
      } catch (err) {
        this.log.warn({ msg: 'gas_station_balance_failed', chainType, err: errorMessage(err) });
      }
    }
  }
}
