import { StatementCache, float8Array, int4Array, int8Array, type Knex } from '@chainpipe/db';
import {
  alignOpenTime,
  byCandleKey,
  candleNumber,
  fedKeys,
  foldUpdates,
  isRollupInterval,
  mergeSnapshot,
  nextOpenTime,
  rollForward,
  rollUpDaily,
  settleLonger,
  type CandleKey,
  type CandleState,
  type Interval,
  type OhlcvRecord,
  type PoolUpdate,
  type RollupInterval,
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
/** The daily candles a roll-up interval is built from, in [start, end). */
const DAYS_SQL = `select ${RECORD_COLUMNS.join(', ')} from kline.candles where pool_id = ? and interval = '1d' and open_time >= ? and open_time < ? order by open_time asc`;

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

const UNNEST = `select * from unnest(?::int[], ?::text[], ?::bigint[], ?::float8[], ?::float8[], ?::float8[], ?::float8[], ?::float8[], ?::bigint[], ?::bigint[], ?::bigint[])`;


/** Candles (kline.candles): upserts from upstream updates, history reads, 1s retention. */
export class CandleRepository {
  /** The history reads: a chart's pages on the request path, fixed texts. */
  private readonly statements: StatementCache;

  constructor(private readonly db: Knex) {
    this.statements = new StatementCache(db);
  }

  /**
   * Stores a batch of updates in one transaction and returns every candle it changed. Every
   * candle the batch touches (its base candles and the longer ones they feed) is read and locked
   * in one statement; the base candles are merged with the batch (`mergeSnapshot`), the longer
   * ones with the base candles' contributions (`settleLonger`: the contribution rules, volumes
   * growing by the base candles' volume deltas), and all are written whole in one statement:
   * those that were stored as updates, the others as plain inserts. Replaying a batch, or the
   * same updates in another order, stores the same values.
   *
   * Why not an upsert with the rules in SQL: an `on conflict` insert of a new row is a
   * speculative insertion (a third more WAL records, about twice a plain insert's time), and its
   * `returning` rows were most of the node-postgres parsing of a call; the values written here
   * are known without reading them back. A candle inserted by another writer between the read and
   * the insert (two consumers of one partition during a rebalance) fails the insert with a
   * unique violation, which rolls the transaction back and retries the call, which then reads it.
   */
  async applyUpdates(updates: readonly PoolUpdate[]): Promise<OhlcvRecord[]> {
    if (!updates.length) return [];
    const folded = [...foldUpdates(updates).values()].sort(byCandleKey);
    const touched = folded.map((f) => f.key).concat(fedKeys(folded.map((f) => f.key)));
    return this.db.transaction(async (trx) => {
      const { rows: locked } = await trx.raw<{ rows: CandleRow[] }>(
        `select ${COLUMNS} from kline.candles where (pool_id, interval, open_time) in (select * from unnest(?::int[], ?::text[], ?::bigint[]))
         order by pool_id, interval, open_time for update`,
        [int4Array(touched.map((k) => k.pool_id)), textArray(touched.map((k) => k.interval)), int8Array(touched.map((k) => k.open_time))],
      );
      // By pool, then by candleNumber: no string key per candle.
      const stored = new Map<number, Map<number, CandleState>>();
      for (const r of locked) {
        let pool = stored.get(r.pool_id);
        if (!pool) stored.set(r.pool_id, (pool = new Map()));
        pool.set(candleNumber(r.interval, Number(r.open_time)), toState(r));
      }
      const storedOf = (key: CandleKey) => stored.get(key.pool_id)?.get(candleNumber(key.interval, key.open_time));
      const changes = folded.map(({ key, state }) => {
        const before = storedOf(key);
        const after = before ? mergeSnapshot(before, { ...state, interval: key.interval, open_time: key.open_time, rank: state.close_src_rank }) : state;
        return { key, before, after };
      });
      // Base candles, then the longer ones, each with the values to write and whether it was stored.
      const all: { key: CandleKey; state: CandleState; volume: number | null; stored: boolean }[] = changes.map(({ key, before, after }) => ({ key, state: after, volume: after.volume, stored: !!before }));
      for (const { key, contribution } of rollForward(changes)) {
        const before = storedOf(key);
        const after = settleLonger(before, contribution);
        all.push({ key, state: after, volume: after.volume, stored: !!before });
      }
      await trx.raw(
        `with updated as (
           insert into kline.candles as c (${COLUMNS}) ${UNNEST}
           on conflict (pool_id, interval, open_time) do update set
             open = excluded.open, high = excluded.high, low = excluded.low, close = excluded.close, volume = excluded.volume,
             open_src = excluded.open_src, close_src_time = excluded.close_src_time, close_src_rank = excluded.close_src_rank, updated_at = now()
         )
         insert into kline.candles (${COLUMNS}) ${UNNEST}`,
        [...columnsOf(all.filter((c) => c.stored)), ...columnsOf(all.filter((c) => !c.stored))],
      );
      return all.map(({ key, state }) => ({ pool_id: key.pool_id, interval: key.interval, open_time: key.open_time, open: state.open, high: state.high, low: state.low, close: state.close, volume: state.volume }));
    });
  }

  /**
   * The 1w / 1M / 1Y candles containing the given daily candles, rolled up from stored days in
   * Postgres: one aggregate per pool and period (the rules of `rollUpDaily`: open of the first
   * day with an open, close of the last day with a close, extremes of high/low, volumes summed
   * in day order), so a pool's year of days is read by an index range scan and never leaves the
   * database.
   */
  async rollupsOf(days: readonly OhlcvRecord[], intervals: readonly RollupInterval[] = ['1w', '1M', '1Y']): Promise<OhlcvRecord[]> {
    if (!days.length) return [];
    const periods = new Map<string, { pool_id: number; interval: RollupInterval; start: number }>();
    for (const d of days) {
      for (const interval of intervals) {
        const start = alignOpenTime(interval, d.open_time);
        periods.set(`${d.pool_id}|${interval}|${start}`, { pool_id: d.pool_id, interval, start });
      }
    }
    const list = [...periods.values()];
    const { rows } = await this.db.raw<{ rows: RecordRow[] }>(
      `select p.pool_id, p.interval, p.open_time, r.open, r.high, r.low, r.close, r.volume
       from unnest(?::int[], ?::text[], ?::bigint[], ?::bigint[]) with ordinality as p(pool_id, interval, open_time, next_open_time, n)
       cross join lateral (
         select (array_agg(c.open order by c.open_time) filter (where c.open is not null))[1] as open,
                max(c.high) as high, min(c.low) as low,
                (array_agg(c.close order by c.open_time desc) filter (where c.close is not null))[1] as close,
                sum(c.volume order by c.open_time) as volume, count(*) as days
         from kline.candles c
         where c.pool_id = p.pool_id and c.interval = '1d' and c.open_time >= p.open_time and c.open_time < p.next_open_time
       ) r
       where r.days > 0
       order by p.n`,
      [int4Array(list.map((p) => p.pool_id)), textArray(list.map((p) => p.interval)), int8Array(list.map((p) => p.start)), int8Array(list.map((p) => nextOpenTime(p.interval, p.start)))],
    );
    return rows.map(toRecord);
  }

  /** Candles of a pool with from ≤ open_time ≤ to, ascending, at most `limit`. */
  async history(poolId: number, interval: Interval, from: number, to: number, limit: number): Promise<OhlcvRecord[]> {
    if (from > to) return [];
    if (!isRollupInterval(interval)) {
      const rows = await this.statements.rows<RecordRow>(HISTORY_SQL, [poolId, interval, from, to, limit]);
      return rows.map(toRecord);
    }
    // Groups starting in [from, to], each with all of its days (the last one may end after `to`).
    const start = alignOpenTime(interval, from) < from ? nextOpenTime(interval, alignOpenTime(interval, from)) : from;
    const end = nextOpenTime(interval, alignOpenTime(interval, to));
    const days = await this.statements.rows<RecordRow>(DAYS_SQL, [poolId, start, end]);
    return rollUpDaily(interval, days.map(toRecord)).slice(0, limit);
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
