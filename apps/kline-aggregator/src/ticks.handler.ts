import { Counter, type Registry } from 'prom-client';
import type { KlineCandlesMessage, MarketTickMessage } from '@chainpipe/contracts';
import type { BatchHandler, DeadLetter, OutgoingMessage } from '@chainpipe/kafka';
import { TICK_INTERVALS, candlesHead, candlesMessage, poolKey, updateRank, type CandlesHead, type CandleValues, type PoolUpdate } from '@chainpipe/kline';
import type { CandleRecord, CandleRepository, LatestCandles, PoolRepository } from '@chainpipe/kline-store';
import { NonRetryableError, settleAll, type Clock } from '@chainpipe/runtime';

export interface TicksHandlerDeps {
  candles: Pick<CandleRepository, 'applyUpdates'>;
  pools: Pick<PoolRepository, 'unregistered'>;
  latest: Pick<LatestCandles, 'putMany'>;
  publish: (messages: OutgoingMessage<KlineCandlesMessage>[]) => Promise<void>;
  registry: Registry;
  clock: Pick<Clock, 'now'>;
  /** How long 1s candles are kept, in seconds (the retention's `KLINE_1S_RETENTION_HOURS`): older 1s ticks are refused (secondsCutOff). */
  secondsRetention: number;
}

type PoolMeta = Pick<MarketTickMessage, 'chain_type' | 'chain_id' | 'pool_address' | 'token'>;

/**
 * Candles of one pool in one kline.candles.v2 record at most (the schema's `maxItems`): a call
 * catching up on a long backlog may change thousands of one pool's 1s candles, and a record must
 * stay far within the topic's 1 MiB.
 */
export const MAX_CANDLES_PER_RECORD = 500;

/**
 * Records of a call published together once their Redis snapshots are written, at most (a
 * pool's records stay in one group). Redis runs a call's script calls one after the other, and a
 * call's publish waited for all of them: at 10,000 pools the process sat idle for about a sixth
 * of a run, mostly waiting for the last call's snapshots. Each group is published as soon as its
 * own are written, while Redis works through the next ones. About one produce request's worth
 * (records of a kilobyte and a half, 1 MiB a request).
 */
export const RECORDS_PER_GROUP = 700;

/**
 * Margin inside the retention: a 1s tick is refused from this many seconds before its candle could
 * have been deleted, so that a retention run on a clock a little ahead never deletes a candle the
 * aggregator would still take ticks of.
 */
export const RETENTION_MARGIN_SECONDS = 60;

/**
 * The oldest second whose 1s ticks the aggregator takes at `nowMs`. A longer candle's volume grows
 * by how much its base candle's grew, measured on the stored base candle; once the retention has
 * deleted a 1s candle, a replay of its ticks (or a late one) would find none and add its whole
 * volume again. Refused by age, not by whether the row is still there, the roll-ups' volume does
 * not depend on the retention having run.
 */
export function secondsCutOff(nowMs: number, secondsRetention: number): number {
  return Math.floor(nowMs / 1000) - secondsRetention + RETENTION_MARGIN_SECONDS;
}

/**
 * Stores a call's updates, shorter intervals first when it holds several (a minute backfilled
 * from the REST OHLCV among live seconds, D189). A base candle that longer ones also feed (1m by
 * the seconds) takes the larger of its seconds' sum and its own snapshot only when the seconds are
 * stored first, as the topic's order has them (the backfill is published once its minute has
 * closed); written in one plan, the seconds' growth was added on top of a snapshot that already
 * held it. The usual call (seconds only) is one round.
 */
export async function applyInRounds(candles: Pick<CandleRepository, 'applyUpdates'>, updates: PoolUpdate[]): Promise<Map<number, CandleValues[]>> {
  const first = updates[0]?.interval;
  if (updates.every((u) => u.interval === first)) return candles.applyUpdates(updates);
  const byInterval = new Map<string, PoolUpdate[]>();
  for (const u of updates) {
    const list = byInterval.get(u.interval);
    if (list) list.push(u);
    else byInterval.set(u.interval, [u]);
  }
  const stored = new Map<number, CandleValues[]>();
  for (const interval of TICK_INTERVALS) {
    const round = byInterval.get(interval);
    if (!round) continue;
    for (const [poolId, changed] of await candles.applyUpdates(round)) {
      const list = stored.get(poolId);
      if (!list) {
        stored.set(poolId, changed);
        continue;
      }
      // A candle a later round changed again is published as that round left it.
      const at = new Map(list.map((c, i) => [`${c.interval}|${c.open_time}`, i]));
      for (const c of changed) {
        const i = at.get(`${c.interval}|${c.open_time}`);
        if (i === undefined) list.push(c);
        else list[i] = c;
      }
    }
  }
  return stored;
}

/** Postgres refused the data itself (a value out of its column's range): it will never succeed. */
function isDataError(err: unknown): boolean {
  const code = (err as { code?: string }).code;
  return typeof code === 'string' && code.startsWith('22');
}

interface PoolOut {
  key: string;
  head: CandlesHead;
  candles: CandleValues[];
  /** Its records, each with its JSON, for Redis and the topic alike. */
  records: CandleRecord[];
}

/**
 * market.ticks.v1 → candles. One handler call stores its ticks in one transaction (every
 * interval, the weeks, months and years among them), keeps the latest per pool and interval in
 * Redis (script calls of many pools) and publishes each pool's changed candles in one
 * kline.candles.v2 record once that pool's snapshot is written (RECORDS_PER_GROUP); it resolves
 * only when all of it is done, so the consumer commits offsets after all of it. Redis first: a
 * gateway that pushed a candle from kline.candles.v2 and then reads a snapshot from Redis must
 * find that candle or a newer one, never the one before it. A replay
 * after a crash stores the same values (order-insensitive merging) and publishes the same
 * candles again (clients upsert by pool, interval and open_time).
 */
export function createTicksHandler(deps: TicksHandlerDeps): BatchHandler<MarketTickMessage> {
  const candlesOut = new Counter({ name: 'chainpipe_kline_candles_published_total', help: 'Candles published to kline.candles.v2, by interval', labelNames: ['interval'], registers: [deps.registry] });
  const pastRetention = new Counter({
    name: 'chainpipe_kline_ticks_past_retention_total',
    help: '1s ticks refused because their second is past the 1s retention (a replay or a late delivery): they would add their volume to the longer candles again',
    registers: [deps.registry],
  });
  return async (received) => {
    // 1s ticks of a second past the retention change nothing (their offsets are committed with the rest).
    const cutOff = secondsCutOff(deps.clock.now(), deps.secondsRetention);
    let refused = 0;
    for (const r of received) if (r.value.interval === '1s' && r.value.open_time < cutOff) refused++;
    const consumed = refused ? received.filter((r) => r.value.interval !== '1s' || r.value.open_time >= cutOff) : received;
    if (refused) pastRetention.inc(refused);
    if (!consumed.length) return undefined;
    // Ticks naming no registered pool are dead letters up front: this check is what keeps their
    // candles out (kline.candles has no foreign key to kline.pools, migration 20261128150000).
    const poolIds = new Set<number>();
    for (const r of consumed) poolIds.add(r.value.pool_id);
    const unknown = await deps.pools.unregistered([...poolIds]);
    const deadLetters: DeadLetter[] = [];
    const records = unknown.size ? consumed.filter((r) => !unknown.has(r.value.pool_id) || void deadLetters.push({ record: r, reason: `no registered pool ${r.value.pool_id}`, code: 'STORE_REJECTED' })) : consumed;
    if (!records.length) return { deadLetters };
    const meta = new Map<number, PoolMeta>();
    const updates: PoolUpdate[] = records.map(({ value: t }) => {
      if (!meta.has(t.pool_id)) meta.set(t.pool_id, { chain_type: t.chain_type, chain_id: t.chain_id, pool_address: t.pool_address, token: t.token });
      return { pool_id: t.pool_id, interval: t.interval, open_time: t.open_time, open: t.open, high: t.high, low: t.low, close: t.close, volume: t.volume, rank: updateRank(t.received_at, t.seq) };
    });
    let stored: Map<number, CandleValues[]>;
    try {
      stored = await applyInRounds(deps.candles, updates);
    } catch (err) {
      if (isDataError(err)) throw new NonRetryableError(`candles refused: ${(err as Error).message}`, 'STORE_REJECTED', { cause: err });
      throw err;
    }
    const updatedAt = deps.clock.now();
    const byPool: PoolOut[] = [];
    const perInterval = new Map<string, number>();
    for (const [poolId, candles] of stored) {
      const m = meta.get(poolId)!;
      byPool.push({ key: poolKey(m), head: candlesHead(poolId, m, updatedAt), candles, records: [] });
      for (const c of candles) perInterval.set(c.interval, (perInterval.get(c.interval) ?? 0) + 1);
    }
    // A pool's candles whole in one record (the usual call), or cut into records of the most;
    // each record's JSON written once, for the Redis snapshot and the topic alike.
    for (const p of byPool) {
      for (let i = 0; i < p.candles.length; i += MAX_CANDLES_PER_RECORD) {
        const value = candlesMessage(p.head, p.candles.length <= MAX_CANDLES_PER_RECORD ? p.candles : p.candles.slice(i, i + MAX_CANDLES_PER_RECORD));
        p.records.push({ value, json: JSON.stringify(value) });
      }
    }
    // Each group's snapshots, then its publish; every script call is written to Redis at once.
    const groups: Promise<void>[] = [];
    for (let from = 0; from < byPool.length; ) {
      let to = from;
      let count = 0;
      while (to < byPool.length && (count === 0 || count + byPool[to].records.length <= RECORDS_PER_GROUP)) count += byPool[to++].records.length;
      const group = byPool.slice(from, to);
      groups.push(deps.latest.putMany(group).then(() => deps.publish(group.flatMap((p) => p.records))));
      from = to;
    }
    await settleAll(groups);
    for (const [interval, n] of perInterval) candlesOut.inc({ interval }, n);
    return deadLetters.length ? { deadLetters } : undefined;
  };
}
