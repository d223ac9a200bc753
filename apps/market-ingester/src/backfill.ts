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

/** How many of the latest gaps the ingester status lists. */
export const RECENT_GAPS = 20;

/**
 * A gap of the live feed as the ingester status shows it: the window whose minutes were asked
 * from the REST OHLCV, and what came back. The REST OHLCV is finest by the minute, so the 1s
 * candles of the window stay missing (`missingIntervals`): a client reading 1s history there
 * is told why it is empty.
 */
export interface BackfillGap {
  reason: 'reconnect' | 'restart' | 'dropped';
  /** Open time of the first and of the last minute of the window (ISO 8601). */
  from: string;
  to: string;
  pools: number;
  /** `waiting` until the window's last minute has closed, then `filled` or `failed` (some pool failed every attempt). */
  state: 'waiting' | 'filled' | 'failed';
  /** Minute candles the REST OHLCV gave for the window, over its pools. */
  candles: number;
  /** Intervals of the window the backfill cannot make whole. */
  missingIntervals: ['1s'];
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
  /** The latest gaps, newest last, at most RECENT_GAPS. */
  private readonly gaps: BackfillGap[] = [];

  constructor(private readonly deps: BackfillDeps) {
    this.log = deps.logger.child({ component: 'backfill' });
    this.metrics = {
      candles: new Counter({ name: 'chainpipe_market_backfilled_candles_total', help: 'Minute candles taken from the upstream REST OHLCV to fill gaps of the live feed', registers: [deps.registry] }),
      gaps: new Counter({ name: 'chainpipe_market_backfill_gaps_total', help: 'Gaps of the live feed filled from the upstream REST OHLCV, by reason (reconnect, restart, dropped)', labelNames: ['reason'], registers: [deps.registry] }),
      failures: new Counter({ name: 'chainpipe_market_backfill_failures_total', help: 'REST OHLCV look-ups of a pool that failed (asked again up to three times)', registers: [deps.registry] }),
    };
  }

  /** Fills `pools`' minutes from the one of `fromSec` to the one of `toSec`, once the latter has closed. */
  schedule(pools: readonly PoolRecord[], fromSec: number, toSec: number, reason: 'reconnect' | 'restart' | 'dropped'): void {
    if (!pools.length || this.stopped) return;
    const lastMinute = toSec - (toSec % 60);
    const firstMinute = Math.max(fromSec - (fromSec % 60), lastMinute - (REST_OHLCV_MAX_LIMIT - 1) * 60);
    this.metrics.gaps.inc({ reason });
    const gap: BackfillGap = { reason, from: isoOf(firstMinute), to: isoOf(lastMinute), pools: pools.length, state: 'waiting', candles: 0, missingIntervals: ['1s'] };
    this.gaps.push(gap);
    if (this.gaps.length > RECENT_GAPS) this.gaps.shift();
    const wait = Math.max(0, (lastMinute + 60) * 1000 + this.deps.settleMs - this.deps.clock.now());
    this.later(wait, () => this.fill([...pools], firstMinute, lastMinute, reason, 1, gap));
  }

  /** The latest gaps (newest last): the ingester status lists them. */
  recentGaps(): BackfillGap[] {
    return this.gaps.map((g) => ({ ...g }));
  }

  private async fill(pools: PoolRecord[], firstMinute: number, lastMinute: number, reason: 'reconnect' | 'restart' | 'dropped', attempt: number, gap: BackfillGap): Promise<void> {
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
    gap.candles += candles;
    gap.state = failed.length ? 'failed' : 'filled';
    if (failed.length && attempt < this.deps.attempts) this.retry(failed, firstMinute, lastMinute, reason, attempt + 1, gap);
  }

  /** A later attempt for the pools that failed: the gap's record follows it. */
  private retry(pools: PoolRecord[], firstMinute: number, lastMinute: number, reason: 'reconnect' | 'restart' | 'dropped', attempt: number, gap: BackfillGap): void {
    if (this.stopped) return;
    gap.state = 'waiting';
    this.later(this.deps.retryMs, () => this.fill(pools, firstMinute, lastMinute, reason, attempt, gap));
  }

  /** Runs `fill` after `ms`, after any fill under way (one at a time). */
  private later(ms: number, fill: () => Promise<void>): void {
    const timer = this.deps.clock.setTimeout(() => {
      this.timers.delete(timer);
      this.running = this.running.then(fill);
    }, ms);
    timer.unref();
    this.timers.add(timer);
  }

  /** Cancels what is scheduled and waits for a fill under way. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) t.cancel();
    this.timers.clear();
    await this.running;
  }
}

function isoOf(sec: number): string {
  return new Date(sec * 1000).toISOString();
}
