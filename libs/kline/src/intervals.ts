/**
 * Candle intervals, all stored. `1s` … `1d` are the ticks' (market.ticks.v1: the upstream's
 * updates come in one of them); `1w`, `1M`, `1Y` have no upstream interval and are fed by the
 * candles of the others, as every longer interval is (decision D115). Every open_time is Unix
 * seconds aligned to its interval in UTC: weeks start Monday 00:00, months and years on their
 * first day.
 */
export const TICK_INTERVALS = ['1s', '1m', '15m', '1h', '4h', '1d'] as const;
export const ROLLUP_INTERVALS = ['1w', '1M', '1Y'] as const;
export const INTERVALS = [...TICK_INTERVALS, ...ROLLUP_INTERVALS] as const;

/** Each interval's place in INTERVALS (shortest first): for arrays and slots kept an interval. */
export const INTERVAL_INDEX: ReadonlyMap<string, number> = new Map(INTERVALS.map((interval, i) => [interval, i]));

export type TickInterval = (typeof TICK_INTERVALS)[number];
export type RollupInterval = (typeof ROLLUP_INTERVALS)[number];
export type Interval = (typeof INTERVALS)[number];

const FIXED_SECONDS: Record<TickInterval, number> = { '1s': 1, '1m': 60, '15m': 900, '1h': 3600, '4h': 14_400, '1d': 86_400 };

export function isInterval(v: unknown): v is Interval {
  return typeof v === 'string' && (INTERVALS as readonly string[]).includes(v);
}

export function isTickInterval(v: unknown): v is TickInterval {
  return typeof v === 'string' && (TICK_INTERVALS as readonly string[]).includes(v);
}

/** Length of a fixed interval in seconds. */
export function intervalSeconds(interval: TickInterval): number {
  return FIXED_SECONDS[interval];
}

/** 1970-01-05 was a Monday: weeks are counted from there. */
const MONDAY_EPOCH = 4 * 86_400;

/** The open_time of the candle of `interval` that contains `unixSeconds`. */
export function alignOpenTime(interval: Interval, unixSeconds: number): number {
  const t = Math.floor(unixSeconds);
  if (isTickInterval(interval)) {
    const len = FIXED_SECONDS[interval];
    return t - mod(t, len);
  }
  if (interval === '1w') return t - mod(t - MONDAY_EPOCH, 7 * 86_400);
  const d = new Date(t * 1000);
  if (interval === '1M') return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1) / 1000;
  return Date.UTC(d.getUTCFullYear(), 0, 1) / 1000;
}

/** The open_time of the candle after the one opening at `openTime`. */
export function nextOpenTime(interval: Interval, openTime: number): number {
  if (isTickInterval(interval)) return openTime + FIXED_SECONDS[interval];
  if (interval === '1w') return openTime + 7 * 86_400;
  const d = new Date(openTime * 1000);
  if (interval === '1M') return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1) / 1000;
  return Date.UTC(d.getUTCFullYear() + 1, 0, 1) / 1000;
}

/**
 * The tick intervals an update of a candle of `source` feeds: its own and every longer one
 * (each a whole multiple of every shorter one). Weeks, months and years are fed too (rollForward).
 */
export function intervalsFedBy(source: TickInterval): TickInterval[] {
  const len = FIXED_SECONDS[source];
  return TICK_INTERVALS.filter((i) => FIXED_SECONDS[i] >= len);
}

/** Canonical order of intervals (shortest first), for stable replies. */
export function sortIntervals<T extends Interval>(list: Iterable<T>): T[] {
  const order = (i: Interval) => INTERVAL_INDEX.get(i)!;
  return [...new Set(list)].sort((a, b) => order(a) - order(b));
}

function mod(a: number, n: number): number {
  return ((a % n) + n) % n;
}
