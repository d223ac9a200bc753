import { Counter, type Registry } from 'prom-client';
import { BinaryCopyWriter, StatementCache, copyInTransaction, float8Column, int4Array, int4Column, int8Array, int8Column, type Knex } from '@chainpipe/db';
import {
  KnownCandles,
  byCandleKey,
  candleKeyString,
  foldUpdates,
  planCandleWrites,
  type BaseCandleKey,
  type CandleKey,
  type CandleState,
  type CandleValues,
  type CandleWrite,
  type Interval,
  type KnownCandle,
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

/** A Postgres array literal of plain words (interval names, transaction ids), by one native join. */
function textArray(values: readonly string[]): string {
  return `{${values.join(',')}}`;
}

/**
 * The UNNEST parameters of candle rows: the numbers as binary arrays read from the rows
 * (`float8Column` …), the interval names as a text literal.
 */
function columnsOf(rows: readonly { key: CandleKey; state: CandleState }[]): (Buffer | string)[] {
  return [
    int4Column(rows, (r) => r.key.pool_id),
    textArray(rows.map((r) => r.key.interval)),
    int8Column(rows, (r) => r.key.open_time),
    float8Column(rows, (r) => r.state.open),
    float8Column(rows, (r) => r.state.high),
    float8Column(rows, (r) => r.state.low),
    float8Column(rows, (r) => r.state.close),
    float8Column(rows, (r) => r.state.volume),
    int8Column(rows, (r) => r.state.open_src),
    int8Column(rows, (r) => r.state.close_src_time),
    int8Column(rows, (r) => r.state.close_src_rank),
  ];
}

/** The types of columnsOf's parameters, for an unnest of them. */
const UNNEST_TYPES = `?::int[], ?::text[], ?::bigint[], ?::float8[], ?::float8[], ?::float8[], ?::float8[], ?::float8[], ?::bigint[], ?::bigint[], ?::bigint[]`;

/**
 * A call's writes of rows it knows as stored: each updated whole, only if it still is the version
 * the call's state came from (its xmin: the transaction that wrote that version). Returns how
 * many rows were updated, and this transaction's id: the version every row the call writes now
 * has. Fewer rows updated than named means another writer changed them since this process saw
 * them.
 *
 * A row's xmin is 32 bits and wraps: a row written by this process, left alone while four
 * billion transactions ran, and changed by another writer in that one transaction id, would be
 * taken as unchanged; the cache holds only the open periods of pools being fed.
 */
const UPDATE_WHOLE = `with updated as (
    update kline.candles as c set
      open = u.open, high = u.high, low = u.low, close = u.close, volume = u.volume,
      open_src = u.open_src, close_src_time = u.close_src_time, close_src_rank = u.close_src_rank, updated_at = now()
    from unnest(${UNNEST_TYPES}, ?::xid[]) as u(${COLUMNS}, version)
    where c.pool_id = u.pool_id and c.interval = u.interval and c.open_time = u.open_time and c.xmin = u.version
    returning 1
  )
  select (select count(*) from updated)::int as updated, pg_current_xact_id()::xid::text as version`;

/**
 * The rows a call knows as absent, inserted by a binary COPY (a unique violation if one exists):
 * about a fifth less of Postgres's time than an insert of the same rows from unnest'ed arrays,
 * and at 10,000 pools a new pool's first call inserts all of its ten candles.
 */
const COPY_CANDLES = `copy kline.candles (${COLUMNS}) from stdin (format binary)`;

/** Bytes of a candle row in the copy data besides its interval's: 11 field lengths, 1 int4, 4 int8, 5 float8. */
const COPY_ROW_BYTES = 11 * 4 + 4 + 4 * 8 + 5 * 8;

function copyRowsOf(rows: readonly { key: CandleKey; state: CandleState }[]): Buffer {
  const w = new BinaryCopyWriter(19 + rows.length * (2 + COPY_ROW_BYTES + 3) + 2);
  for (const { key, state } of rows) {
    w.row(11, COPY_ROW_BYTES)
      .int4(key.pool_id)
      .text(key.interval)
      .int8(key.open_time)
      .float8(state.open)
      .float8(state.high)
      .float8(state.low)
      .float8(state.close)
      .float8(state.volume)
      .int8(state.open_src)
      .int8(state.close_src_time)
      .int8(state.close_src_rank);
  }
  return w.finish();
}

/** Rows changed by another writer since this process saw them (a rebalance, a restart). */
class StaleCandles extends Error {}

const UNIQUE_VIOLATION = '23505';
const isStale = (err: unknown) => err instanceof StaleCandles || (err as { code?: string }).code === UNIQUE_VIOLATION;

/** Candles (kline.candles): whole writes from upstream updates, history reads, 1s retention. */
export class CandleRepository {
  /** The history reads: a chart's pages on the request path, fixed texts. */
  private readonly statements: StatementCache;

  /** The candles this process wrote last (one per process: the aggregator's calls of different partitions write different pools). */
  private readonly known = new KnownCandles();
  private readonly rereads?: Counter;

  /** `registry`: where the writer counts its calls written again after a read under lock. */
  constructor(
    private readonly db: Knex,
    opts: { registry?: Registry } = {},
  ) {
    this.statements = new StatementCache(db);
    if (opts.registry) {
      this.rereads = new Counter({
        name: 'chainpipe_kline_candle_rereads_total',
        help: 'Aggregator calls written again after reading their candles under lock: another writer had changed them (a rebalance, a restart) or one taken as new existed (a late update of an older period)',
        registers: [opts.registry],
      });
    }
  }

  /**
   * Stores a batch of updates in one transaction and returns every candle it changed, base and
   * longer (1w, 1M and 1Y among them), each with its stored values, by pool. Every row is written whole,
   * merged here (planCandleWrites): first on what this process wrote last, taking a candle it
   * has no record of as new, without reading anything (the new ones copied in, the others
   * updated by one statement); if another writer
   * changed any of those rows (or a candle taken as new exists: after a restart, a rebalance, or
   * a late update of an older period), that transaction rolls back and the call reads every row
   * it writes under lock and merges on those. Replaying a batch, or the same updates in another
   * order, stores the same values.
   *
   * Two writers of one partition at once (a rebalance) can both find a candle missing under lock
   * and insert it: the later fails with a unique violation, which rolls its transaction back and
   * retries the call, which then finds it.
   */
  async applyUpdates(updates: readonly PoolUpdate[]): Promise<Map<number, CandleValues[]>> {
    if (!updates.length) return new Map();
    const folded = [...foldUpdates(updates).values()].sort(byCandleKey);
    const poolIds = new Set(folded.map((f) => f.key.pool_id));
    let written: { writes: CandleWrite[]; version: string };
    try {
      written = await this.db.transaction((trx) => this.writeWhole(trx, planCandleWrites(folded, (key) => this.known.get(key))));
    } catch (err) {
      this.known.forget(poolIds);
      if (!isStale(err)) throw err;
      this.rereads?.inc();
      try {
        written = await this.db.transaction(async (trx) => this.writeWhole(trx, planCandleWrites(folded, await this.lockStored(trx, folded))));
      } catch (lockedErr) {
        this.known.forget(poolIds);
        throw lockedErr;
      }
    }
    this.known.remember(written.writes, written.version);
    // By pool, each candle as it is published: one object a candle, its fields in their order.
    const byPool = new Map<number, CandleValues[]>();
    for (const { key, state } of written.writes) {
      const candle: CandleValues = { interval: key.interval, open_time: key.open_time, open: state.open, high: state.high, low: state.low, close: state.close, volume: state.volume };
      const list = byPool.get(key.pool_id);
      if (list) list.push(candle);
      else byPool.set(key.pool_id, [candle]);
    }
    return byPool;
  }

  /**
   * Writes the rows: the absent ones copied in, the stored ones updated by one statement; throws
   * StaleCandles if a row to update was not the version named (a copied row that exists fails the
   * copy with a unique violation).
   */
  private async writeWhole(trx: Knex.Transaction, writes: CandleWrite[]): Promise<{ writes: CandleWrite[]; version: string }> {
    // In key order (pool, interval, open_time: the primary key's columns), so a pool's rows
    // arrive together: its inserts land next to each other in the index (new pools' at its right
    // end) instead of a call's base candles first and the longer ones between them after, and
    // the updates take their rows in the order every writer does. The plan is two runs in that
    // order (base candles, then the ones they feed), which the sort merges in one pass; a call of
    // 3,333 new pools (10,000 over three partitions) took about a tenth less.
    const stored = writes.filter((w) => w.version !== undefined).sort(byCandleKey);
    const absent = writes.filter((w) => w.version === undefined).sort(byCandleKey);
    if (absent.length) await copyInTransaction(trx, COPY_CANDLES, copyRowsOf(absent));
    const {
      rows: [result],
    } = await trx.raw<{ rows: { updated: number; version: string }[] }>(UPDATE_WHOLE, [...columnsOf(stored), textArray(stored.map((w) => w.version!))]);
    if (result.updated !== stored.length) throw new StaleCandles(`${stored.length - result.updated} of ${stored.length} candles changed by another writer`);
    return { writes, version: result.version };
  }

  /**
   * Every row the folded base candles write (their own and the longer ones they feed), locked
   * in one order (concurrent writers take them in the same one), as planCandleWrites' `stored`.
   */
  private async lockStored(trx: Knex.Transaction, folded: readonly { key: BaseCandleKey; state: CandleState }[]): Promise<(key: CandleKey) => KnownCandle | undefined> {
    const keys = planCandleWrites(folded, () => undefined)
      .sort(byCandleKey)
      .map((w) => w.key);
    const { rows } = await trx.raw<{ rows: (CandleRow & { version: string })[] }>(
      `select ${COLUMNS}, xmin::text as version from kline.candles where (pool_id, interval, open_time) in (select * from unnest(?::int[], ?::text[], ?::bigint[]))
       order by pool_id, interval, open_time for update`,
      [int4Array(keys.map((k) => k.pool_id)), textArray(keys.map((k) => k.interval)), int8Array(keys.map((k) => k.open_time))],
    );
    const found = new Map(rows.map((r) => [`${r.pool_id}|${r.interval}|${r.open_time}`, { state: toState(r), version: r.version }]));
    return (key) => found.get(candleKeyString(key));
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

  /** The open time of each pool's newest stored candle of `interval` (pools without one left out). */
  async latestOpenTimes(poolIds: readonly number[], interval: Interval): Promise<Map<number, number>> {
    if (!poolIds.length) return new Map();
    const { rows } = await this.db.raw<{ rows: { pool_id: number; open_time: string | null }[] }>(
      `select p.id as pool_id, (select max(open_time) from kline.candles c where c.pool_id = p.id and c.interval = ?) as open_time from unnest(?::int[]) as p(id)`,
      [interval, int4Array(poolIds)],
    );
    return new Map(rows.filter((r) => r.open_time !== null).map((r) => [r.pool_id, Number(r.open_time)]));
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
