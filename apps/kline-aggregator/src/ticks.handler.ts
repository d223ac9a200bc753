import { Counter, type Registry } from 'prom-client';
import type { KlineCandleMessage, MarketTickMessage } from '@chainpipe/contracts';
import type { BatchHandler, OutgoingMessage } from '@chainpipe/kafka';
import { poolKey, updateRank, type OhlcvRecord, type PoolUpdate } from '@chainpipe/kline';
import type { CandleRepository, LatestCandles } from '@chainpipe/kline-store';
import { NonRetryableError, type Clock } from '@chainpipe/runtime';

export interface TicksHandlerDeps {
  candles: Pick<CandleRepository, 'applyUpdates' | 'rollupsOf'>;
  latest: Pick<LatestCandles, 'putMany'>;
  publish: (messages: OutgoingMessage<KlineCandleMessage>[]) => Promise<void>;
  registry: Registry;
  clock: Pick<Clock, 'now'>;
}

type PoolMeta = Pick<MarketTickMessage, 'chain_type' | 'chain_id' | 'pool_address' | 'token'>;

/** Postgres refused the data itself (a tick naming no registered pool): it will never succeed. */
function isDataError(err: unknown): boolean {
  const code = (err as { code?: string }).code;
  return typeof code === 'string' && (code === '23503' || code.startsWith('22'));
}

/**
 * market.ticks.v1 → candles. One handler call stores its ticks in one transaction (every stored
 * interval), rolls the changed days up into 1w/1M/1Y, keeps the latest per pool and interval in
 * Redis (one pipeline for the whole call) and then publishes every resulting candle to kline.candles.v1; it resolves only then, so
 * the consumer commits offsets after all of it. Redis first: a gateway that pushed a candle from
 * kline.candles.v1 and then reads a snapshot from Redis must find that candle or a newer one,
 * never the one before it. A replay after a crash stores the same values
 * (order-insensitive merging) and publishes the same candles again (clients upsert by pool,
 * interval and open_time).
 */
export function createTicksHandler(deps: TicksHandlerDeps): BatchHandler<MarketTickMessage> {
  const candlesOut = new Counter({ name: 'chainpipe_kline_candles_published_total', help: 'Candles published to kline.candles.v1, by interval', labelNames: ['interval'], registers: [deps.registry] });
  return async (records) => {
    const meta = new Map<number, PoolMeta>();
    const updates: PoolUpdate[] = records.map(({ value: t }) => {
      meta.set(t.pool_id, { chain_type: t.chain_type, chain_id: t.chain_id, pool_address: t.pool_address, token: t.token });
      return { pool_id: t.pool_id, interval: t.interval, open_time: t.open_time, open: t.open, high: t.high, low: t.low, close: t.close, volume: t.volume, rank: updateRank(t.received_at, t.seq) };
    });
    let stored: OhlcvRecord[];
    try {
      stored = await deps.candles.applyUpdates(updates);
    } catch (err) {
      if (isDataError(err)) throw new NonRetryableError(`candles refused: ${(err as Error).message}`, 'STORE_REJECTED', { cause: err });
      throw err;
    }
    const rolled = await deps.candles.rollupsOf(stored.filter((c) => c.interval === '1d'));
    const updatedAt = deps.clock.now();
    const byPool = new Map<string, KlineCandleMessage[]>();
    for (const c of [...stored, ...rolled]) {
      const m = meta.get(c.pool_id)!;
      const key = poolKey(m);
      const msg: KlineCandleMessage = { pool_id: c.pool_id, ...m, interval: c.interval, open_time: c.open_time, open: c.open, high: c.high, low: c.low, close: c.close, volume: c.volume, updated_at: updatedAt };
      const list = byPool.get(key);
      if (list) list.push(msg);
      else byPool.set(key, [msg]);
    }
    const messages = [...byPool.values()].flatMap((list) => list.map((value) => ({ value })));
    await deps.latest.putMany(byPool);
    await deps.publish(messages);
    const perInterval = new Map<string, number>();
    for (const m of messages) perInterval.set(m.value.interval, (perInterval.get(m.value.interval) ?? 0) + 1);
    for (const [interval, n] of perInterval) candlesOut.inc({ interval }, n);
  };
}
