import type { CandleRepository } from '@chainpipe/kline-store';
import { periodicJob, systemClock, type Clock, type EntryPoint, type Logger } from '@chainpipe/runtime';

/** Deletes 1s candles older than the retention, in bounded batches, on a timer. */
export function secondsRetention(deps: {
  candles: Pick<CandleRepository, 'deleteSecondsBefore'>;
  retentionSeconds: number;
  intervalMs: number;
  logger: Logger;
  /** Time of the timer and of the retention's cut-off. */
  clock?: Pick<Clock, 'now' | 'setTimeout'>;
}): EntryPoint {
  const clock = deps.clock ?? systemClock;
  const run = async () => {
    const before = Math.floor(clock.now() / 1000) - deps.retentionSeconds;
    let total = 0;
    for (;;) {
      const n = await deps.candles.deleteSecondsBefore(before);
      total += n;
      if (n === 0) break;
    }
    if (total) deps.logger.info({ msg: 'seconds_candles_expired', deleted: total, before });
  };
  return periodicJob({ name: 'seconds-retention', intervalMs: deps.intervalMs, run, logger: deps.logger, clock });
}
