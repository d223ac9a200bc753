import { INTERVAL_INDEX, ROLLUP_INTERVALS, TICK_INTERVALS, alignOpenTime, intervalsFedBy, type Interval, type RollupInterval, type TickInterval } from './intervals';

/**
 * Candle arithmetic, free of I/O.
 *
 * The upstream sends repeated snapshots of the candle in progress (same open_time, growing
 * volume, widening high/low, moving close). Updates may reach us twice or out of order, so every
 * rule here is a merge that gives the same result whatever the order and however often an
 * update is applied:
 * - a snapshot of the same candle: open is fixed, high = max, low = min, volume = max (it only
 *   grows), close = the close of the newest update by (received_at, seq) rank;
 * - a longer candle is fed by its base candles: open of the earliest base candle, close of the
 *   latest one (by its open_time, then rank), high/low the extremes, and volume grows by exactly
 *   what each base candle's volume grew by (its delta), so a replay adds nothing.
 */

export type Price = number | null;

export interface Ohlcv {
  open: Price;
  high: Price;
  low: Price;
  close: Price;
  volume: Price;
}

/** One upstream update of one candle (the value of market.ticks.v1, narrowed to what merging needs). */
export interface CandleUpdate extends Ohlcv {
  interval: TickInterval;
  open_time: number;
  /** Receive order at the ingester: Unix ms × 1000 + a per-process sequence (mod 1000). */
  rank: number;
}

/** A stored candle with what the merge rules need to stay order-insensitive. */
export interface CandleState extends Ohlcv {
  /** open_time of the base candle that gave `open`. */
  open_src: number;
  /** open_time of the base candle that gave `close`, and that update's rank. */
  close_src_time: number;
  close_src_rank: number;
}

/** What one changed base candle adds to a longer candle. */
export interface Contribution extends CandleState {
  /** How much the base candle's volume grew (null: the base has no volume). */
  volume_delta: number | null;
}

export interface OhlcvRecord extends Ohlcv {
  pool_id: number;
  interval: Interval;
  open_time: number;
}

const max = (a: Price, b: Price): Price => (a === null ? b : b === null ? a : Math.max(a, b));
const min = (a: Price, b: Price): Price => (a === null ? b : b === null ? a : Math.min(a, b));

function later(aTime: number, aRank: number, bTime: number, bRank: number): boolean {
  return aTime > bTime || (aTime === bTime && aRank > bRank);
}

/** Rank of an update: receive time in ms and a sequence number, so that later sorts higher. */
export function updateRank(receivedAtMs: number, seq: number): number {
  return receivedAtMs * 1000 + (seq % 1000);
}

/** Merges a snapshot update into the stored state of the same candle (undefined: none yet). */
export function mergeSnapshot(existing: CandleState | undefined, u: CandleUpdate): CandleState {
  if (!existing) {
    return { open: u.open, high: u.high, low: u.low, close: u.close, volume: u.volume, open_src: u.open_time, close_src_time: u.open_time, close_src_rank: u.rank };
  }
  const newer = u.rank > existing.close_src_rank;
  // A stored candle also fed by shorter ones (1m from 1s) has its open from its earliest fed
  // candle; a snapshot of the whole candle (a backfilled minute) opens before that one.
  if (u.open_time < existing.open_src && u.open !== null) {
    return {
      open: u.open,
      high: max(existing.high, u.high),
      low: min(existing.low, u.low),
      close: newer ? (u.close ?? existing.close) : (existing.close ?? u.close),
      volume: max(existing.volume, u.volume),
      open_src: u.open_time,
      close_src_time: existing.close_src_time,
      close_src_rank: Math.max(existing.close_src_rank, u.rank),
    };
  }
  return {
    open: existing.open ?? u.open,
    high: max(existing.high, u.high),
    low: min(existing.low, u.low),
    close: newer ? (u.close ?? existing.close) : (existing.close ?? u.close),
    volume: max(existing.volume, u.volume),
    open_src: existing.open_src,
    close_src_time: existing.close_src_time,
    close_src_rank: Math.max(existing.close_src_rank, u.rank),
  };
}

/** What a base candle, changed from `before` to `after`, adds to every longer candle it falls in. */
export function contributionOf(before: CandleState | undefined, after: CandleState): Contribution {
  const delta = after.volume === null ? null : after.volume - (before?.volume ?? 0);
  return contribution(after, delta);
}

/*
 * Field by field, not spread: these run per candle on the aggregator's hot path (tens of
 * thousands a call), where copying an object by spread is a generic copy several times slower.
 */
const contribution = (s: CandleState, volumeDelta: number | null): Contribution => ({
  open: s.open,
  high: s.high,
  low: s.low,
  close: s.close,
  volume: s.volume,
  open_src: s.open_src,
  close_src_time: s.close_src_time,
  close_src_rank: s.close_src_rank,
  volume_delta: volumeDelta,
});

/** Applies a contribution to another (withContribution's rules), their volume deltas added: several base candles' into one. */
export function applyContribution(existing: Contribution | undefined, c: Contribution): Contribution {
  if (!existing) return contribution(c, c.volume_delta);
  const combined = withContribution(existing, c) as Contribution;
  combined.volume_delta = existing.volume_delta === null && c.volume_delta === null ? null : (existing.volume_delta ?? 0) + (c.volume_delta ?? 0);
  return combined;
}

/**
 * A longer candle with a contribution applied: `existing` is its stored state (undefined: none
 * yet, and the contribution opens it, its volume what the base candle's grew by): the merge rules
 * of a longer candle, for one written whole.
 */
export function withContribution(existing: CandleState | undefined, c: Contribution): CandleState {
  if (!existing) return { open: c.open, high: c.high, low: c.low, close: c.close, volume: c.volume_delta, open_src: c.open_src, close_src_time: c.close_src_time, close_src_rank: c.close_src_rank };
  const earlier = c.open_src < existing.open_src || (c.open_src === existing.open_src && existing.open === null);
  const newer = later(c.close_src_time, c.close_src_rank, existing.close_src_time, existing.close_src_rank);
  return {
    open: earlier ? (c.open ?? existing.open) : existing.open,
    open_src: earlier ? c.open_src : existing.open_src,
    high: max(existing.high, c.high),
    low: min(existing.low, c.low),
    close: newer ? (c.close ?? existing.close) : existing.close,
    close_src_time: newer ? c.close_src_time : existing.close_src_time,
    close_src_rank: newer ? c.close_src_rank : existing.close_src_rank,
    volume: existing.volume === null && c.volume_delta === null ? null : (existing.volume ?? 0) + (c.volume_delta ?? 0),
  };
}

export interface CandleKey {
  pool_id: number;
  interval: Interval;
  open_time: number;
}

/** A key of a candle of an upstream interval (what updates come in). */
export interface BaseCandleKey extends CandleKey {
  interval: TickInterval;
}

export const candleKeyString = (k: CandleKey): string => `${k.pool_id}|${k.interval}|${k.open_time}`;

export interface PoolUpdate extends CandleUpdate {
  pool_id: number;
}

/** Folds a batch of updates into one merged snapshot per base candle (order does not matter). */
export function foldUpdates(updates: readonly PoolUpdate[]): Map<string, { key: BaseCandleKey; state: CandleState }> {
  const out = new Map<string, { key: BaseCandleKey; state: CandleState }>();
  for (const u of updates) {
    const key: BaseCandleKey = { pool_id: u.pool_id, interval: u.interval, open_time: alignOpenTime(u.interval, u.open_time) };
    const id = candleKeyString(key);
    const prev = out.get(id);
    // Updates of a base interval come aligned: only a misaligned one needs a copy.
    const aligned: CandleUpdate = key.open_time === u.open_time ? u : { interval: u.interval, open_time: key.open_time, open: u.open, high: u.high, low: u.low, close: u.close, volume: u.volume, rank: u.rank };
    out.set(id, { key, state: mergeSnapshot(prev?.state, aligned) });
  }
  return out;
}

/**
 * One order of candle keys: pool, then interval name by code unit, then open_time. Any fixed
 * order serves the writers (concurrent transactions take their row locks in one order); the
 * names compare by code unit, not `localeCompare` (a collator call per comparison).
 */
export const byCandleKey = (a: { key: CandleKey }, b: { key: CandleKey }): number =>
  a.key.pool_id - b.key.pool_id || (a.key.interval < b.key.interval ? -1 : a.key.interval > b.key.interval ? 1 : 0) || a.key.open_time - b.key.open_time;

/**
 * The longer candles each upstream interval's candles feed: the longer upstream intervals
 * (intervalsFedBy without itself) and the weeks, months and years, which begin at a day's start,
 * so that a candle of any upstream interval falls within one of each. Each list in the order of
 * the names (byCandleKey's order of one period of each).
 */
const FED_LONGER_BY_NAME = new Map<string, Interval[]>(
  TICK_INTERVALS.map((interval) => [interval, [...intervalsFedBy(interval).filter((i) => i !== interval), ...ROLLUP_INTERVALS].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))]),
);

type Change = { key: BaseCandleKey; before: CandleState | undefined; after: CandleState };

/**
 * The longer candles a set of changed base candles feeds, one combined contribution each, in
 * `byCandleKey` order. `changes` are (key, before, after) of base candles. A pool with one changed
 * base candle in the call (the usual call: its ticks fold into one candle) feeds one candle of
 * each longer interval, each with that candle's contribution, in an order known beforehand; a
 * pool with several combines them, keyed by number and sorted. At 10,000 pools a call rolls
 * ~27,000 longer candles, where a string key per candle and one sort of them all were a tenth
 * of the aggregator's CPU, and a map and a sort per pool, most of what was left.
 */
export function rollForward(changes: readonly Change[]): { key: CandleKey; contribution: Contribution }[] {
  // By pool, each pool's changes together (planCandleWrites passes them in key order).
  let ordered = changes;
  for (let i = 1; i < changes.length; i++) {
    if (changes[i].key.pool_id < changes[i - 1].key.pool_id) {
      ordered = [...changes].sort((a, b) => a.key.pool_id - b.key.pool_id);
      break;
    }
  }
  const out: { key: CandleKey; contribution: Contribution }[] = [];
  // The longer candles' open times of each base candle's (a call's base candles share a second
  // or a few: aligning weeks, months and years goes through Date), in FED_LONGER_BY_NAME's order.
  // Keyed by a candle's number within its pool: open_time × 16 + its interval's index (9 intervals).
  const openTimesOf = new Map<number, number[]>();
  const openTimes = (key: BaseCandleKey, fed: readonly Interval[]): number[] => {
    const base = key.open_time * 16 + INTERVAL_INDEX.get(key.interval)!;
    let times = openTimesOf.get(base);
    if (!times) openTimesOf.set(base, (times = fed.map((interval) => alignOpenTime(interval, key.open_time))));
    return times;
  };
  for (let i = 0; i < ordered.length; ) {
    let end = i + 1;
    while (end < ordered.length && ordered[end].key.pool_id === ordered[i].key.pool_id) end++;
    if (end === i + 1) {
      const { key, before, after } = ordered[i];
      // Contributions are never changed in place (applyContribution makes a new one): one serves all.
      const c = contributionOf(before, after);
      const fed = FED_LONGER_BY_NAME.get(key.interval) ?? [];
      const times = openTimes(key, fed);
      for (let f = 0; f < fed.length; f++) out.push({ key: { pool_id: key.pool_id, interval: fed[f], open_time: times[f] }, contribution: c });
    } else {
      const pool = new Map<number, { key: CandleKey; contribution: Contribution }>();
      for (let k = i; k < end; k++) {
        const { key, before, after } = ordered[k];
        const c = contributionOf(before, after);
        const fed = FED_LONGER_BY_NAME.get(key.interval) ?? [];
        const times = openTimes(key, fed);
        for (let f = 0; f < fed.length; f++) {
          const id = times[f] * 16 + INTERVAL_INDEX.get(fed[f])!;
          const prev = pool.get(id);
          if (prev) prev.contribution = applyContribution(prev.contribution, c);
          else pool.set(id, { key: { pool_id: key.pool_id, interval: fed[f], open_time: times[f] }, contribution: c });
        }
      }
      out.push(...[...pool.values()].sort(byCandleKey));
    }
    i = end;
  }
  return out;
}

/**
 * `1w`, `1M`, `1Y` candles from daily ones: open of the first day with an open, close of the
 * last day with a close, extremes of high/low, sum of volumes (null when no day has one). What
 * the contributions of the days' base candles make of them (`rollForward`), stated the other way
 * round: the model the tests hold the stored roll-ups to.
 */
export function rollUpDaily(interval: RollupInterval, days: readonly OhlcvRecord[]): OhlcvRecord[] {
  const sorted = [...days].sort((a, b) => a.open_time - b.open_time);
  const groups = new Map<number, OhlcvRecord>();
  for (const d of sorted) {
    const openTime = alignOpenTime(interval, d.open_time);
    const g = groups.get(openTime);
    if (!g) {
      groups.set(openTime, { pool_id: d.pool_id, interval, open_time: openTime, open: d.open, high: d.high, low: d.low, close: d.close, volume: d.volume });
      continue;
    }
    g.open = g.open ?? d.open;
    g.high = max(g.high, d.high);
    g.low = min(g.low, d.low);
    g.close = d.close ?? g.close;
    g.volume = g.volume === null ? d.volume : d.volume === null ? g.volume : g.volume + d.volume;
  }
  return [...groups.values()];
}
