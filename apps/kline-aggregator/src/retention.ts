import type { CandleRepository } from '@chainpipe/kline-store';
import { errorMessage, type EntryPoint, type Logger } from '@chainpipe/runtime';

/** Deletes 1s candles older than the retention, in bounded batches, on a timer. */
export function secondsRetention(deps: { candles: Pick<CandleRepository, 'deleteSecondsBefore'>; retentionSeconds: number; intervalMs: number; logger: Logger; now: () => number }): EntryPoint {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  const run = async () => {
    const before = Math.floor(deps.now() / 1000) - deps.retentionSeconds;
    let total = 0;
    for (;;) {
      const n = await deps.candles.deleteSecondsBefore(before);
      total += n;
      if (n === 0) break;
    }
    if (total) deps.logger.info({ msg: 'seconds_candles_expired', deleted: total, before });
  };
  return {
    name: 'seconds-retention',
    start: async () => {
      timer = setInterval(() => {
        if (running) return;
        running = run()
          .catch((err) => deps.logger.warn({ msg: 'seconds_retention_failed', err: errorMessage(err) }))
          .finally(() => (running = undefined));
      }, deps.intervalMs);
      timer.unref();
    },
    stop: async () => {
      clearInterval(timer);
      await running;
    },
  };
}
