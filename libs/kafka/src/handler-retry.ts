import { backoffMs, errorMessage, isDependencyUnavailable, isNonRetryable, systemClock, type Clock, type Logger, type NonRetryableError } from '@chainpipe/runtime';
import type { ConsumedRecord, DeadLetter, HandlerContext, HandlerResult } from './handler';

export interface RetryPolicy {
  /** Retries of a failure other than an unreachable dependency before giving up. */
  retries: number;
  initialMs: number;
  maxMs: number;
}

/** The handler kept failing past the retry budget: the consumer cannot go on. */
export class RetryBudgetExhausted extends Error {
  constructor(cause: unknown) {
    super(`handler failed past its retry budget: ${errorMessage(cause)}`, { cause });
    this.name = 'RetryBudgetExhausted';
  }
}

/** The consumer was stopped while its handler waited to retry: the chunk is left uncommitted (replayed). */
export class StoppedWhileRetrying extends Error {
  constructor(cause: unknown) {
    super(`stopped while retrying: ${errorMessage(cause)}`, { cause });
    this.name = 'StoppedWhileRetrying';
  }
}

export interface HandlerRetryOptions<T> {
  handler: (records: ConsumedRecord<T>[], ctx: HandlerContext) => Promise<HandlerResult | void>;
  policy: RetryPolicy;
  /** Aborted when the consumer stops: a backoff under way ends at once. */
  signal: AbortSignal;
  logger: Logger;
  /** Called before each backoff wait (a metric counts them). */
  onRetry?: () => void;
  clock?: Pick<Clock, 'sleep'>;
  /** The backoff's jitter; injected for a known sequence in tests. */
  random?: () => number;
}

/**
 * The consumer's retry rule for one chunk, apart from Kafka. Retryable failures are retried in
 * place with capped exponential backoff; non-retryable ones are isolated down to single records,
 * which become dead letters. A dependency that is down (Postgres, Redis unreachable) is waited
 * for as long as it takes, without spending the retry budget: restarting the app would not bring
 * it back, and nothing is committed meanwhile. Other failures get `policy.retries` retries, then
 * `RetryBudgetExhausted`. A stop during a wait ends it with `StoppedWhileRetrying`.
 */
export class HandlerRetry<T> {
  /**
   * Why each run still waits for a dependency, by run: partitions handled side by side each run
   * their own retry, and one that recovers must not clear what another still waits for.
   */
  private readonly waits = new Map<symbol, string>();
  private readonly clock: Pick<Clock, 'sleep'>;

  constructor(private readonly opts: HandlerRetryOptions<T>) {
    this.clock = opts.clock ?? systemClock;
  }

  /** The handler is waiting for a dependency (Postgres, Redis) to come back: why (the first run that waits). */
  get waitingFor(): string | undefined {
    for (const why of this.waits.values()) return why;
    return undefined;
  }

  async run(records: ConsumedRecord<T>[], heartbeat: () => Promise<void>): Promise<DeadLetter[]> {
    const run = Symbol('run');
    try {
      return await this.attempt(run, records, heartbeat);
    } finally {
      this.waits.delete(run);
    }
  }

  private async attempt(run: symbol, records: ConsumedRecord<T>[], heartbeat: () => Promise<void>): Promise<DeadLetter[]> {
    const { policy, signal, logger } = this.opts;
    const ctx: HandlerContext = { heartbeat, signal };
    let failures = 0;
    let outage = 0;
    for (;;) {
      try {
        const result = await this.opts.handler(records, ctx);
        if (this.waits.has(run)) logger.info({ msg: 'dependency_back', waits: outage });
        this.waits.delete(run);
        return result?.deadLetters ?? [];
      } catch (err) {
        if (isNonRetryable(err)) {
          if (records.length === 1) {
            return [{ record: records[0] as ConsumedRecord<unknown>, reason: errorMessage(err), code: (err as NonRetryableError).code ?? 'HANDLER_REJECTED' }];
          }
          const dead: DeadLetter[] = [];
          for (const r of records) dead.push(...(await this.attempt(run, [r], heartbeat)));
          return dead;
        }
        if (signal.aborted) throw new StoppedWhileRetrying(err);
        let wait: number;
        if (isDependencyUnavailable(err)) {
          // Backoff grows to its cap and stays there: one probe per `maxMs` while it is away.
          wait = backoffMs(Math.min(outage, 30), policy.initialMs, policy.maxMs, this.opts.random);
          if (!this.waits.has(run)) logger.warn({ msg: 'dependency_unavailable', err: errorMessage(err) });
          this.waits.set(run, errorMessage(err));
          outage++;
        } else {
          if (failures >= policy.retries) throw new RetryBudgetExhausted(err);
          wait = backoffMs(failures, policy.initialMs, policy.maxMs, this.opts.random);
          failures++;
          logger.warn({ msg: 'handler_retry', attempt: failures, waitMs: wait, err: errorMessage(err) });
        }
        this.opts.onRetry?.();
        await this.clock.sleep(wait, signal);
        if (signal.aborted) throw new StoppedWhileRetrying(err);
        await heartbeat();
      }
    }
  }
}
