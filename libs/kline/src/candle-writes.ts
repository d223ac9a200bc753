import { mergeSnapshot, rollForward, withContribution, type BaseCandleKey, type CandleKey, type CandleState } from './candles';
import { INTERVALS, INTERVAL_INDEX } from './intervals';

/*
 * Candles written whole: which rows a call writes, and with what. Free of I/O.
 *
 * A call's base candles are merged with their stored state and every longer candle they feed is
 * given its contributions here, so each row is written with its final values and nothing is read
 * back. What "stored" means comes from the caller: the rows it read under lock, or the ones this
 * process wrote last (KnownCandles), each with the row version it saw. A row with a version is
 * updated only if it still has that version; a row without one is inserted, which fails if it
 * exists. Either failure means another writer got there (a rebalance, a restart), and the caller
 * reads and merges instead: no write is ever based on a state that is not the stored one.
 */

/** A stored candle as this process saw it: its state and the row version (Postgres's xmin) it had. */
export interface KnownCandle {
  state: CandleState;
  version: string;
}

/** One row to write: its final state; `version` the stored row's to update, undefined to insert. */
export interface CandleWrite {
  key: CandleKey;
  state: CandleState;
  version: string | undefined;
}

/**
 * The rows a call writes: its folded base candles merged with what `stored` gives for them,
 * then every longer candle they feed with their contributions applied to its stored state. A key
 * that is both (a pool fed in two upstream intervals) is written once, its contribution applied
 * on top of its merged state, as the base write then the longer upsert of one transaction did.
 */
export function planCandleWrites(folded: readonly { key: BaseCandleKey; state: CandleState }[], stored: (key: CandleKey) => KnownCandle | undefined): CandleWrite[] {
  const writes: CandleWrite[] = [];
  const changes = folded.map(({ key, state }) => {
    const known = stored(key);
    const after = known ? mergeSnapshot(known.state, { ...state, interval: key.interval, open_time: key.open_time, rank: state.close_src_rank }) : state;
    writes.push({ key, state: after, version: known?.version });
    return { key, before: known?.state, after };
  });
  // Base candles of an interval that is also fed (anything but 1s): by key, to combine.
  let baseAt: Map<string, number> | undefined;
  writes.forEach((w, i) => {
    if (w.key.interval !== '1s') (baseAt ??= new Map()).set(`${w.key.pool_id}|${w.key.interval}|${w.key.open_time}`, i);
  });
  for (const { key, contribution } of rollForward(changes)) {
    const at = baseAt?.get(`${key.pool_id}|${key.interval}|${key.open_time}`);
    if (at !== undefined) {
      writes[at].state = withContribution(writes[at].state, contribution);
      continue;
    }
    const known = stored(key);
    writes.push({ key, state: withContribution(known?.state, contribution), version: known?.version });
  }
  return writes;
}

/** Periods kept a pool and interval: the open one, and the one before for its late updates. */
const PERIODS_KEPT = 2;
const INTERVAL_COUNT = INTERVALS.length;

/*
 * A remembered candle is a slot of numbers in its pool's Float64Array: its open_time (NaN: an
 * empty slot), which of its prices are null (bits, in PRICE_FIELDS' order), the prices, then the
 * three source fields. A pool's candles are two objects however many (its array and the row
 * versions beside it), not a slot and a state object per candle: the cache holds up to
 * `maxPools` pools for as long as they are fed, and V8 marks and moves every object it holds.
 */
const PRICE_FIELDS = ['open', 'high', 'low', 'close', 'volume'] as const;
const OPEN_TIME = 0;
const NULLS = 1;
const PRICES = 2;
const OPEN_SRC = PRICES + PRICE_FIELDS.length;
const CLOSE_SRC_TIME = OPEN_SRC + 1;
const CLOSE_SRC_RANK = OPEN_SRC + 2;
const SLOT_SIZE = CLOSE_SRC_RANK + 1;

/** A pool's remembered candles: PERIODS_KEPT slots an interval, and the row version of each. */
interface PoolSlots {
  values: Float64Array;
  versions: (string | undefined)[];
}

function newPoolSlots(): PoolSlots {
  return { values: new Float64Array(INTERVAL_COUNT * PERIODS_KEPT * SLOT_SIZE).fill(Number.NaN), versions: new Array<string | undefined>(INTERVAL_COUNT * PERIODS_KEPT) };
}

function readState(v: Float64Array, at: number): CandleState {
  const nulls = v[at + NULLS];
  const price = (f: number): number | null => (nulls & (1 << f) ? null : v[at + PRICES + f]);
  return {
    open: price(0),
    high: price(1),
    low: price(2),
    close: price(3),
    volume: price(4),
    open_src: v[at + OPEN_SRC],
    close_src_time: v[at + CLOSE_SRC_TIME],
    close_src_rank: v[at + CLOSE_SRC_RANK],
  };
}

function writeSlot(v: Float64Array, at: number, openTime: number, state: CandleState): void {
  let nulls = 0;
  PRICE_FIELDS.forEach((field, f) => {
    const value = state[field];
    if (value === null) nulls |= 1 << f;
    v[at + PRICES + f] = value ?? 0;
  });
  v[at + OPEN_TIME] = openTime;
  v[at + NULLS] = nulls;
  v[at + OPEN_SRC] = state.open_src;
  v[at + CLOSE_SRC_TIME] = state.close_src_time;
  v[at + CLOSE_SRC_RANK] = state.close_src_rank;
}

/**
 * The candles this process wrote last, per pool and interval the newest PERIODS_KEPT, with the
 * row version each was written as: what a call's writes are based on instead of reading them
 * back. Only ever a hint: a write based on an entry fails if the row changed since (see
 * planCandleWrites), and the caller then forgets the call's pools. Bounded by `maxPools`
 * (all forgotten when passed: the next calls read what they need).
 */
export class KnownCandles {
  private readonly pools = new Map<number, PoolSlots>();

  constructor(private readonly maxPools = 200_000) {}

  get size(): number {
    return this.pools.size;
  }

  get(key: CandleKey): KnownCandle | undefined {
    const pool = this.pools.get(key.pool_id);
    if (!pool) return undefined;
    const first = INTERVAL_INDEX.get(key.interval)! * PERIODS_KEPT;
    for (let slot = first; slot < first + PERIODS_KEPT; slot++) {
      if (pool.values[slot * SLOT_SIZE + OPEN_TIME] === key.open_time) return { state: readState(pool.values, slot * SLOT_SIZE), version: pool.versions[slot]! };
    }
    return undefined;
  }

  /** Keeps what a committed call wrote, all as row `version`. */
  remember(writes: readonly { key: CandleKey; state: CandleState }[], version: string): void {
    for (const { key, state } of writes) {
      let pool = this.pools.get(key.pool_id);
      if (!pool) {
        if (this.pools.size >= this.maxPools) this.pools.clear();
        this.pools.set(key.pool_id, (pool = newPoolSlots()));
      }
      const v = pool.values;
      const first = INTERVAL_INDEX.get(key.interval)! * PERIODS_KEPT;
      // Its period's slot; else an empty one; else the oldest, if older than this period (one
      // older than every period kept is not kept).
      let chosen = -1;
      let oldest = -1;
      for (let slot = first; slot < first + PERIODS_KEPT; slot++) {
        const openTime = v[slot * SLOT_SIZE + OPEN_TIME];
        if (openTime === key.open_time) {
          chosen = slot;
          break;
        }
        if (Number.isNaN(openTime)) {
          if (chosen < 0) chosen = slot;
        } else if (oldest < 0 || openTime < v[oldest * SLOT_SIZE + OPEN_TIME]) oldest = slot;
      }
      if (chosen < 0 && oldest >= 0 && v[oldest * SLOT_SIZE + OPEN_TIME] < key.open_time) chosen = oldest;
      if (chosen < 0) continue;
      writeSlot(v, chosen * SLOT_SIZE, key.open_time, state);
      pool.versions[chosen] = version;
    }
  }

  /** Forgets the pools' candles (their rows changed, or the outcome of a write is unknown). */
  forget(poolIds: Iterable<number>): void {
    for (const id of poolIds) this.pools.delete(id);
  }
}
