import { Counter, type Registry } from 'prom-client';
import { REST_OHLCV_MAX_LIMIT, type PoolRecord, type RestOhlcv } from '@chainpipe/kline';
import { eachBounded, errorMessage, type Clock, type Logger, type Timer } from '@chainpipe/runtime';

export interface BackfillDeps {
  /** The pool's minute candles starting before `beforeSec`, at most `limit` (the upstream's REST OHLCV), oldest first. */
  fetchMinutes: (pool: PoolRecord, beforeSec: number, limit: number) => Promise<RestOhlcv[]>;
  /** Hands a pool's minute candles to the same path as the live updates. */
  publish: (pool: PoolRecord, candles: RestOhlcv[]) => void;
  clock: Pick<Clock, 'now' | 'setTimeout'>;
  logger: Logger;
  registry: Registry;
  /** Wait after a gap's last minute has closed before asking, so the upstream has it whole. */
  settleMs: number;
  /** Pools asked at the same time at most. */
  concurrency: number;
  /** A pool whose look-up failed is asked again after this, up to `attempts` times in all. */
  retryMs: number;
  attempts: number;
}

/**
 * Fills a gap of the live feed (an upstream reconnect, an ingester restart, updates the bound
 * dropped) with the upstream's REST OHLCV. Its finest timeframe is the minute: the gap's minutes
 * come back as 1m candles, published as market.ticks.v1 updates of interval 1m through the same
 * path as the live ones, which the aggregator merges like any other (idempotent: asking twice
 * changes nothing). The 1s candles of the gap stay missing. A gap is asked for once the minute it
 * ends in has closed (and `settleMs` more), so every minute comes back whole; at most
 * REST_OHLCV_MAX_LIMIT minutes back from there.
 */
export class Backfill {
  private readonly timers = new Set<Timer>();
  private running: Promise<void> = Promise.resolve();
  private stopped = false;
  private readonly log: Logger;
  private readonly metrics;

  constructor(private readonly deps: BackfillDeps) {
    this.log = deps.logger.child({ component: 'backfill' });
    this.metrics = {
      candles: new Counter({ name: 'chainpipe_market_backfilled_candles_total', help: 'Minute candles taken from the upstream REST OHLCV to fill gaps of the live feed', registers: [deps.registry] }),
      gaps: new Counter({ name: 'chainpipe_market_backfill_gaps_total', help: 'Gaps of the live feed filled from the upstream REST OHLCV, by reason (reconnect, restart, dropped)', labelNames: ['reason'], registers: [deps.registry] }),
      failures: new Counter({ name: 'chainpipe_market_backfill_failures_total', help: 'REST OHLCV look-ups of a pool that failed (asked again up to three times)', registers: [deps.registry] }),
    };
  }

  /** Fills `pools`' minutes from the one of `fromSec` to the one of `toSec`, once the latter has closed. */
  schedule(pools: readonly PoolRecord[], fromSec: number, toSec: number, reason: 'reconnect' | 'restart' | 'dropped', attempt = 1): void {
    if (!pools.length || this.stopped) return;
    const lastMinute = toSec - (toSec % 60);
    const firstMinute = Math.max(fromSec - (fromSec % 60), lastMinute - (REST_OHLCV_MAX_LIMIT - 1) * 60);
    if (attempt === 1) this.metrics.gaps.inc({ reason });
    const wait = Math.max(0, (lastMinute + 60) * 1000 + this.deps.settleMs - this.deps.clock.now());
    const timer = this.deps.clock.setTimeout(() => {
      this.timers.delete(timer);
      this.running = this.running.then(() => this.fill([...pools], firstMinute, lastMinute, reason, attempt));
    }, attempt === 1 ? wait : this.deps.retryMs);
    timer.unref();
    this.timers.add(timer);
  }

  private async fill(pools: PoolRecord[], firstMinute: number, lastMinute: number, reason: 'reconnect' | 'restart' | 'dropped', attempt: number): Promise<void> {
    if (this.stopped) return;
    const limit = (lastMinute - firstMinute) / 60 + 1;
    const failed: PoolRecord[] = [];
    let candles = 0;
    await eachBounded(pools, this.deps.concurrency, async (pool) => {
      try {
        const rows = (await this.deps.fetchMinutes(pool, lastMinute + 60, limit)).filter((r) => r.t >= firstMinute && r.t <= lastMinute);
        if (rows.length) this.deps.publish(pool, rows);
        candles += rows.length;
      } catch (err) {
        this.metrics.failures.inc();
        failed.push(pool);
        this.log.warn({ msg: 'backfill_failed', poolId: pool.id, attempt, err: errorMessage(err) });
      }
    });
    this.metrics.candles.inc(candles);
    this.log.info({ msg: 'backfilled', reason, pools: pools.length, candles, from: firstMinute, to: lastMinute, failed: failed.length });
    if (failed.length && attempt < this.deps.attempts) this.schedule(failed, firstMinute, lastMinute, reason, attempt + 1);
  }

  /** Cancels what is scheduled and waits for a fill under way. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) t.cancel();
    this.timers.clear();
    await this.running;
  }
}
