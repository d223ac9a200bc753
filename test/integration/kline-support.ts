import { randomBytes } from 'node:crypto';
import { Registry } from 'prom-client';
import type { MarketTickMessage } from '@chainpipe/contracts';
import type { Knex } from '@chainpipe/db';
import type { BatchHandler, ConsumedRecord } from '@chainpipe/kafka';
import { CandleRepository, PoolRepository, type LatestCandles } from '@chainpipe/kline-store';
import { systemClock } from '@chainpipe/runtime';
import { createTicksHandler, type TicksHandlerDeps } from '../../apps/kline-aggregator/src/ticks.handler';

/** Registers an active pool of a random address for a suite's candles; returns its id. */
export async function registerPool(db: Knex): Promise<number> {
  const [{ id }] = (await db('kline.pools')
    .insert({ chain_type: 'evm', chain_id: '1', network_id: 'eth', pool_address: `0x${randomBytes(20).toString('hex')}`, token: 'base', is_active: true })
    .returning('id')) as { id: number }[];
  return id;
}

/** Deletes a suite's pool and its candles. */
export async function removePool(db: Knex, id: number): Promise<void> {
  await db('kline.candles').where({ pool_id: id }).delete();
  await db('kline.pools').where({ id }).delete();
}

/**
 * The aggregator's handler on real stores (candles and pools in `db`, snapshots in `latest`), publishing to `publish` (nowhere by default).
 * `opts`: its clock (a suite of ticks of a fixed past day runs at that day: 1s ticks past the retention are refused) and registry.
 */
export function aggregatorOn(
  db: Knex,
  latest: LatestCandles,
  publish: TicksHandlerDeps['publish'] = async () => {},
  opts: { clock?: TicksHandlerDeps['clock']; registry?: Registry } = {},
): BatchHandler<MarketTickMessage> {
  return createTicksHandler({
    candles: new CandleRepository(db),
    pools: new PoolRepository(db),
    latest,
    registry: opts.registry ?? new Registry(),
    clock: opts.clock ?? systemClock,
    secondsRetention: SECONDS_RETENTION,
    publish,
  });
}

/** The aggregator's default 1s retention (KLINE_1S_RETENTION_HOURS), in seconds. */
export const SECONDS_RETENTION = 24 * 3600;

/** A clock standing at `unixSeconds`. */
export const clockAt = (unixSeconds: number): TicksHandlerDeps['clock'] => ({ now: () => unixSeconds * 1000 });

/** Ticks as one call's consumed records, offsets from 0. */
export function consumedTicks(ticks: readonly MarketTickMessage[]): ConsumedRecord<MarketTickMessage>[] {
  return ticks.map((value, i) => ({ topic: 't', partition: 0, offset: String(i), key: null, value, headers: {}, timestamp: '0' }));
}

/** Hands `ticks` to `handler` as one call. */
export function handleTicks(handler: BatchHandler<MarketTickMessage>, ticks: readonly MarketTickMessage[]): ReturnType<BatchHandler<MarketTickMessage>> {
  return handler(consumedTicks(ticks), { heartbeat: async () => {}, signal: new AbortController().signal });
}
