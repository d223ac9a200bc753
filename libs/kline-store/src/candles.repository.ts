import { StatementCache, float8Array, int4Array, int8Array, type Knex } from '@chainpipe/db';
import {
  byCandleKey,
  candleKeyString,
  foldUpdates,
  mergeSnapshot,
  rollForward,
  type CandleKey,
  type CandleState,
  type Interval,
  type OhlcvRecord,
  type PoolUpdate,
} from '@chainpipe/kline';

interface CandleRow {
  pool_id: number;
  interval: string;
  open_time: string;
  open: number | null;
  high: number | null;
  low: number | null;
  close: number | null;
  volume: number | null;
  open_src: string;
  close_src_time: string;
  close_src_rank: string;
}

const COLUMN_LIST = ['pool_id', 'interval', 'open_time', 'open', 'high', 'low', 'close', 'volume', 'open_src', 'close_src_time', 'close_src_rank'];
const COLUMNS = COLUMN_LIST.join(', ');
/** What a read for clients needs (`toRecord`): the fold's source columns stay in the database. */
const RECORD_COLUMNS = ['pool_id', 'interval', 'open_time', 'open', 'high', 'low', 'close', 'volume'] as const;
type RecordRow = Pick<CandleRow, (typeof RECORD_COLUMNS)[number]>;
/** A page of an interval stored as such: `limit` candles from `from` to `to`, ascending. */
const HISTORY_SQL = `select ${RECORD_COLUMNS.join(', ')} from kline.candles where pool_id = ? and interval = ? and open_time between ? and ? order by open_time asc limit ?`;

const toRecord = (r: RecordRow): OhlcvRecord => ({
  pool_id: r.pool_id,
  interval: r.interval as Interval,
  open_time: Number(r.open_time),
  open: r.open,
  high: r.high,
  low: r.low,
  close: r.close,
  volume: r.volume,
});

const toState = (r: CandleRow): CandleState => ({
  open: r.open,
  high: r.high,
  low: r.low,
  close: r.close,
  volume: r.volume,
  open_src: Number(r.open_src),
  close_src_time: Number(r.close_src_time),
  close_src_rank: Number(r.close_src_rank),
});

/** A Postgres array literal of the interval names (plain words), by one native join. */
function textArray(values: readonly string[]): string {
  return `{${values.join(',')}}`;
}

/**
 * The UNNEST parameters of candle rows: the numbers as binary arrays (`float8Array` …), the
 * interval names as a text literal.
 */
function columnsOf(rows: readonly { key: CandleKey; state: CandleState; volume: number | null }[]): (Buffer | string)[] {
  const n = rows.length;
  const poolIds = new Array<number>(n);
  const intervals = new Array<string>(n);
  const openTimes = new Array<number>(n);
  const opens = new Array<number | null>(n);
  const highs = new Array<number | null>(n);
  const lows = new Array<number | null>(n);
  const closes = new Array<number | null>(n);
  const volumes = new Array<number | null>(n);
  const openSrcs = new Array<number>(n);
  const closeSrcTimes = new Array<number>(n);
  const closeSrcRanks = new Array<number>(n);
  for (let i = 0; i < n; i++) {
    const { key, state, volume } = rows[i];
    poolIds[i] = key.pool_id;
    intervals[i] = key.interval;
    openTimes[i] = key.open_time;
    opens[i] = state.open;
    highs[i] = state.high;
    lows[i] = state.low;
    closes[i] = state.close;
    volumes[i] = volume;
    openSrcs[i] = state.open_src;
    closeSrcTimes[i] = state.close_src_time;
    closeSrcRanks[i] = state.close_src_rank;
  }
  return [
    int4Array(poolIds),
    textArray(intervals),
    int8Array(openTimes),
    float8Array(opens),
    float8Array(highs),
    float8Array(lows),
    float8Array(closes),
    float8Array(volumes),
    int8Array(openSrcs),
    int8Array(closeSrcTimes),
    int8Array(closeSrcRanks),
  ];
}

/** Candle rows from columnsOf's parameters. */
const UNNEST = `select * from unnest(?::int[], ?::text[], ?::bigint[], ?::float8[], ?::float8[], ?::float8[], ?::float8[], ?::float8[], ?::bigint[], ?::bigint[], ?::bigint[])`;
/** Candles known to be stored (locked by this transaction), written whole. */
const UPSERT_WHOLE = `insert into kline.candles as c (${COLUMNS}) ${UNNEST}
  on conflict (pool_id, interval, open_time) do update set
    open = excluded.open, high = excluded.high, low = excluded.low, close = excluded.close, volume = excluded.volume,
    open_src = excluded.open_src, close_src_time = excluded.close_src_time, close_src_rank = excluded.close_src_rank, updated_at = now()`;
/** Candles not stored yet: a plain insert (a unique violation if another writer got there first). */
const INSERT_NEW = `insert into kline.candles (${COLUMNS}) ${UNNEST}`;

/** A later close wins: by its base candle's open_time, then by the update's rank. */
const NEWER_CLOSE = '(excluded.close_src_time, excluded.close_src_rank) > (c.close_src_time, c.close_src_rank)';
const EARLIER_OPEN = '(excluded.open_src < c.open_src or (excluded.open_src = c.open_src and c.open is null))';

/** Candles (kline.candles): upserts from upstream updates, history reads, 1s retention. */
export class CandleRepository {
  /** The history reads: a chart's pages on the request path, fixed texts. */
  private readonly statements: StatementCache;

  constructor(private readonly db: Knex) {
    this.statements = new StatementCache(db);
  }

  /**
   * Stores a batch of updates in one transaction and returns every candle it changed. Base
   * candles are locked, merged with the batch (see `mergeSnapshot`) and written whole; longer
   * candles, 1w, 1M and 1Y included, are upserted with the contribution rules in SQL, their
   * volume growing by the base candles' volume deltas. Replaying a batch, or the same updates in
   * another order, stores the same values.
   *
   * A base candle the lock found no row of is written by a plain insert: every call brings new
   * 1s candles, and an `on conflict` insert of a new row is a speculative insertion (a third more
   * WAL records, about twice a plain insert's time). One inserted by another writer in between
   * (two consumers of one partition during a rebalance) fails the insert with a unique
   * violation, which rolls the transaction back and retries the call, which then finds it.
   */
  async applyUpdates(updates: readonly PoolUpdate[]): Promise<OhlcvRecord[]> {
    if (!updates.length) return [];
    const folded = [...foldUpdates(updates).values()].sort(byCandleKey);
    return this.db.transaction(async (trx) => {
      const { rows: locked } = await trx.raw<{ rows: CandleRow[] }>(
        `select ${COLUMNS} from kline.candles where (pool_id, interval, open_time) in (select * from unnest(?::int[], ?::text[], ?::bigint[]))
         order by pool_id, interval, open_time for update`,
        [int4Array(folded.map((f) => f.key.pool_id)), textArray(folded.map((f) => f.key.interval)), int8Array(folded.map((f) => f.key.open_time))],
      );
      const existing = new Map(locked.map((r) => [`${r.pool_id}|${r.interval}|${r.open_time}`, toState(r)]));
      const changes = folded.map(({ key, state }) => {
        const before = existing.get(candleKeyString(key));
        const after = before ? mergeSnapshot(before, { ...state, interval: key.interval, open_time: key.open_time, rank: state.close_src_rank }) : state;
        return { key, before, after };
      });
      // Base candles are written whole, as merged here under the lock: nothing to read back.
      const baseRows = changes.map((c) => ({ key: c.key, state: c.after, volume: c.after.volume }));
      await trx.raw(`with updated as (${UPSERT_WHOLE}) ${INSERT_NEW}`, [...columnsOf(baseRows.filter((_, i) => changes[i].before)), ...columnsOf(baseRows.filter((_, i) => !changes[i].before))]);
      const base: OhlcvRecord[] = changes.map(({ key, after }) => ({ pool_id: key.pool_id, interval: key.interval, open_time: key.open_time, open: after.open, high: after.high, low: after.low, close: after.close, volume: after.volume }));
      const longer = rollForward(changes);
      if (!longer.length) return base;
      const { rows: rolled } = await trx.raw<{ rows: RecordRow[] }>(
        `insert into kline.candles as c (${COLUMNS}) ${UNNEST}
         on conflict (pool_id, interval, open_time) do update set
           open = case when ${EARLIER_OPEN} then coalesce(excluded.open, c.open) else c.open end,
           open_src = least(c.open_src, excluded.open_src),
           high = greatest(c.high, excluded.high),
           low = least(c.low, excluded.low),
           close = case when ${NEWER_CLOSE} then coalesce(excluded.close, c.close) else c.close end,
           close_src_time = case when ${NEWER_CLOSE} then excluded.close_src_time else c.close_src_time end,
           close_src_rank = case when ${NEWER_CLOSE} then excluded.close_src_rank else c.close_src_rank end,
           volume = case when c.volume is null and excluded.volume is null then null else coalesce(c.volume, 0) + coalesce(excluded.volume, 0) end,
           updated_at = now()
         returning ${RECORD_COLUMNS.join(', ')}`,
        columnsOf(longer.map((l) => ({ key: l.key, state: l.contribution, volume: l.contribution.volume_delta }))),
      );
      return base.concat(rolled.map(toRecord));
    });
  }

  /**
   * Candles of a pool with from ≤ open_time ≤ to, ascending, at most `limit`; weeks, months and
   * years included, stored as the other intervals are (a period starting in [from, to] holds all
   * of its days).
   */
  async history(poolId: number, interval: Interval, from: number, to: number, limit: number): Promise<OhlcvRecord[]> {
    if (from > to) return [];
    const rows = await this.statements.rows<RecordRow>(HISTORY_SQL, [poolId, interval, from, to, limit]);
    return rows.map(toRecord);
  }

  /** Deletes 1s candles older than `beforeOpenTime`, at most `batch` at a time; returns how many. */
  async deleteSecondsBefore(beforeOpenTime: number, batch = 5000): Promise<number> {
    const res = await this.db.raw<{ rowCount: number }>(
      `delete from kline.candles where ctid in (select ctid from kline.candles where interval = '1s' and open_time < ? limit ?)`,
      [beforeOpenTime, batch],
    );
    return res.rowCount;
  }
}
