import { type Clock, type Timer, systemClock } from './clock';
import { errorMessage } from './errors';
import type { Logger } from './logger';
import type { EntryPoint } from './service';

export interface PeriodicJobOptions {
  /** Names the entry point and its log lines (`<name>_failed`). */
  name: string;
  intervalMs: number;
  /** One pass. A failed pass is logged; the next one comes at the next interval all the same. */
  run: () => Promise<unknown>;
  logger: Logger;
  /** Run a first pass at start instead of one interval later. */
  runAtStart?: boolean;
  clock?: Pick<Clock, 'setTimeout'>;
}

/**
 * A job an app runs on a timer (the webhook retry scheduler, the 1s candle retention, the
 * pending-transaction checks), as an entry point of the service kit: one pass at a time, the
 * next one `intervalMs` after the last one ended, and a stop that waits for the pass under way.
 */
export function periodicJob(opts: PeriodicJobOptions): EntryPoint {
  const clock = opts.clock ?? systemClock;
  let timer: Timer | undefined;
  let pass: Promise<void> | undefined;
  let stopping = false;
  const schedule = () => {
    if (!stopping) timer = clock.setTimeout(tick, opts.intervalMs);
  };
  const tick = () => {
    pass = opts
      .run()
      .then(
        () => undefined,
        (err: unknown) => opts.logger.warn({ msg: `${opts.name}_failed`, err: errorMessage(err) }),
      )
      .finally(() => {
        pass = undefined;
        schedule();
      });
  };
  return {
    name: opts.name,
    start: async () => {
      if (opts.runAtStart) tick();
      else schedule();
      return { [`${opts.name}IntervalMs`]: opts.intervalMs };
    },
    stop: async () => {
      stopping = true;
      timer?.cancel();
      await pass;
    },
  };
}
