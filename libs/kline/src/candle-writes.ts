import { mergeSnapshot, rollForward, withContribution, type BaseCandleKey, type CandleKey, type CandleState } from './candles';
import { INTERVALS } from './intervals';

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

/** A remembered candle: the period it opens and what was written (one object a candle kept). */
interface Slot extends KnownCandle {
  open_time: number;
}

/** Periods kept a pool and interval: the open one, and the one before for its late updates. */
const PERIODS_KEPT = 2;
const INTERVAL_COUNT = INTERVALS.length;
const INTERVAL_INDEX = new Map<string, number>(INTERVALS.map((interval, i) => [interval, i]));

/**
 * The candles this process wrote last, per pool and interval the newest PERIODS_KEPT, with the
 * row version each was written as: what a call's writes are based on instead of reading them
 * back. Only ever a hint: a write based on an entry fails if the row changed since (see
 * planCandleWrites), and the caller then forgets the call's pools. Bounded by `maxPools`
 * (all forgotten when passed: the next calls read what they need).
 */
export class KnownCandles {
  private readonly pools = new Map<number, (Slot[] | undefined)[]>();

  constructor(private readonly maxPools = 200_000) {}

  get size(): number {
    return this.pools.size;
  }

  get(key: CandleKey): KnownCandle | undefined {
    const slots = this.pools.get(key.pool_id)?.[INTERVAL_INDEX.get(key.interval)!];
    if (!slots) return undefined;
    for (const s of slots) if (s.open_time === key.open_time) return s;
    return undefined;
  }

  /** Keeps what a committed call wrote, all as row `version`. */
  remember(writes: readonly { key: CandleKey; state: CandleState }[], version: string): void {
    for (const { key, state } of writes) {
      let pool = this.pools.get(key.pool_id);
      if (!pool) {
        if (this.pools.size >= this.maxPools) this.pools.clear();
        this.pools.set(key.pool_id, (pool = new Array<Slot[] | undefined>(INTERVAL_COUNT)));
      }
      const i = INTERVAL_INDEX.get(key.interval)!;
      const slots = pool[i];
      // Arrays made at their length: an empty array's first push reserves room for 17.
      if (!slots) {
        pool[i] = [{ open_time: key.open_time, state, version }];
        continue;
      }
      let slot: Slot | undefined;
      let oldest: Slot | undefined;
      for (const s of slots) {
        if (s.open_time === key.open_time) slot = s;
        if (!oldest || s.open_time < oldest.open_time) oldest = s;
      }
      if (!slot && slots.length < PERIODS_KEPT) {
        pool[i] = [...slots, { open_time: key.open_time, state, version }];
        continue;
      }
      // A new period takes the oldest one's place; one older than every period kept is not kept.
      if (!slot && oldest!.open_time < key.open_time) slot = oldest;
      if (!slot) continue;
      slot.open_time = key.open_time;
      slot.state = state;
      slot.version = version;
    }
  }

  /** Forgets the pools' candles (their rows changed, or the outcome of a write is unknown). */
  forget(poolIds: Iterable<number>): void {
    for (const id of poolIds) this.pools.delete(id);
  }
}
