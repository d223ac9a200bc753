import { Counter, Gauge, type Registry } from 'prom-client';
import type { MarketTickMessage } from '@chainpipe/contracts';
import type { OutgoingMessage } from '@chainpipe/kafka';
import { isTickInterval, planSubscriptions, upstreamPoolId, type Assignment, type PoolRecord, type RestOhlcv, type UpstreamOhlcv } from '@chainpipe/kline';
import type { IngesterStatus } from '@chainpipe/kline-store';
import { errorMessage, type Clock, type Logger } from '@chainpipe/runtime';
import { Backfill } from './backfill';
import { PendingTicks } from './pending-ticks';
import { subscriptionKey, type UpstreamSocket } from './upstream-socket';

export interface MarketIngesterDeps {
  activePools: () => Promise<PoolRecord[]>;
  publish: (messages: OutgoingMessage<MarketTickMessage>[]) => Promise<void>;
  /** Opens (starts) a socket; it reports updates through `onUpdate`, and a loss once the channel is back through `onGap`. */
  openSocket: (index: number, onUpdate: (u: UpstreamOhlcv) => void, onGap: (subscriptions: string[], fromMs: number, toMs: number) => void) => UpstreamSocket;
  interval: MarketTickMessage['interval'];
  subscriptionsPerSocket: number;
  logger: Logger;
  registry: Registry;
  clock: Pick<Clock, 'now' | 'setTimeout'>;
  /** Updates waiting for the broker at most (`MARKET_MAX_PENDING_TICKS`): past it they are dropped and the ingester is unready. */
  maxPendingTicks: number;
  /** Wait before a failed publish is tried again: doubling from `initialMs` to `maxMs`. */
  publishRetry: { initialMs: number; maxMs: number };
  /** Gaps of the live feed filled from the upstream's REST OHLCV (Backfill). */
  backfill: {
    fetchMinutes: (pool: PoolRecord, beforeSec: number, limit: number) => Promise<RestOhlcv[]>;
    /** Each pool's newest stored 1m candle (Unix s): where a restart's gap begins. */
    latestStoredMinutes: (poolIds: number[]) => Promise<Map<number, number>>;
    settleMs: number;
  };
}

/** Updates per publish at most: a backlog after an outage goes out in requests of this many. */
const PUBLISH_BATCH = 1000;

const upstreamLookup = (networkId: string, poolAddress: string, token: string) => `${networkId}|${poolAddress.toLowerCase()}|${token}`;

/**
 * Keeps the upstream subscriptions equal to the active pools: every pool is one subscription
 * (its network_id:pool_address, the configured interval, its token side), spread over as many
 * sockets as the per-socket limit needs. Each update of a known pool becomes a market.ticks.v1
 * message keyed by the pool key. Publishing does not block the socket: updates wait for the
 * broker in order (PendingTicks), each publish tried again until it is taken, up to
 * `maxPendingTicks` waiting; past that bound an update is dropped and counted, and the ingester is
 * unready (`backlogFull`) until the backlog is below it again. Gaps (a socket's channel lost and
 * back, a start, updates the bound dropped) are filled from the upstream's REST OHLCV (Backfill).
 * Subscriptions the upstream refused are retried by their socket and listed in the status
 * (`refusedPools`, `chainpipe_market_refused_subscriptions`).
 */
export class MarketIngester {
  private pools: PoolRecord[] = [];
  private byUpstream = new Map<string, PoolRecord>();
  private assignment: Assignment = [];
  private sockets: UpstreamSocket[] = [];
  private seq = 0;
  private lastTickAt: number | null = null;
  private syncing: Promise<void> = Promise.resolve();
  private readonly log: Logger;
  private readonly metrics;
  private readonly pending: PendingTicks<MarketTickMessage>;
  private readonly backfill: Backfill;
  private byId = new Map<number, PoolRecord>();
  /** Pool id → the earliest open time of an update the bound dropped, until its backfill is scheduled. */
  private readonly droppedFrom = new Map<number, number>();
  private restartFilled = false;

  constructor(private readonly deps: MarketIngesterDeps) {
    this.log = deps.logger.child({ component: 'ingester' });
    this.metrics = {
      ticks: new Counter({ name: 'chainpipe_market_ticks_total', help: 'Upstream updates by outcome', labelNames: ['outcome'], registers: [deps.registry] }),
      sockets: new Gauge({ name: 'chainpipe_market_upstream_sockets', help: 'Upstream sockets by state', labelNames: ['state'], registers: [deps.registry] }),
      pools: new Gauge({ name: 'chainpipe_market_active_pools', help: 'Active pools subscribed upstream', registers: [deps.registry] }),
      pending: new Gauge({ name: 'chainpipe_market_pending_ticks', help: 'Upstream updates waiting for the broker (MARKET_MAX_PENDING_TICKS at most)', registers: [deps.registry] }),
      refused: new Gauge({ name: 'chainpipe_market_refused_subscriptions', help: 'Active pools whose upstream subscription (set_pools) was refused, retried with backoff', registers: [deps.registry] }),
    };
    this.pending = new PendingTicks<MarketTickMessage>({
      publish: deps.publish,
      maxPending: deps.maxPendingTicks,
      maxBatch: PUBLISH_BATCH,
      retry: deps.publishRetry,
      clock: deps.clock,
      onPublished: (n) => {
        this.metrics.ticks.inc({ outcome: 'published' }, n);
        if (this.droppedFrom.size && !this.pending.full) this.fillDropped();
      },
      onFailed: (n, err) => {
        this.metrics.ticks.inc({ outcome: 'publish_failed' }, n);
        this.log.warn({ msg: 'tick_publish_failed', waiting: this.pending.size, err: errorMessage(err) });
      },
      onDropped: (m) => {
        this.metrics.ticks.inc({ outcome: 'dropped' });
        const from = this.droppedFrom.get(m.value.pool_id);
        if (from === undefined || m.value.open_time < from) this.droppedFrom.set(m.value.pool_id, m.value.open_time);
        this.log.warn({ msg: 'tick_dropped_backlog_full', poolId: m.value.pool_id, openTime: m.value.open_time, waiting: this.pending.size });
      },
    });
    this.backfill = new Backfill({
      fetchMinutes: deps.backfill.fetchMinutes,
      publish: (pool, candles) => {
        for (const c of candles) this.pending.push({ value: this.tickOf(pool, '1m', c) });
      },
      clock: deps.clock,
      logger: deps.logger,
      registry: deps.registry,
      settleMs: deps.backfill.settleMs,
      concurrency: 2,
      retryMs: 30_000,
      attempts: 3,
    });
  }

  /** The pools whose updates the bound dropped: filled from the earliest one dropped to now. */
  private fillDropped(): void {
    const nowSec = Math.floor(this.deps.clock.now() / 1000);
    for (const [poolId, from] of this.droppedFrom) {
      const pool = this.byId.get(poolId);
      if (pool) this.backfill.schedule([pool], from, nowSec, 'dropped');
    }
    this.droppedFrom.clear();
  }

  /** A socket's channel is back after a loss: its pools are filled over the time nothing was heard. */
  private onGap(subscriptions: string[], fromMs: number, toMs: number): void {
    const pools: PoolRecord[] = [];
    for (const key of subscriptions) {
      const [, token, upstreamPool] = key.split('|');
      const sep = upstreamPool.indexOf(':');
      const pool = this.byUpstream.get(upstreamLookup(upstreamPool.slice(0, sep), upstreamPool.slice(sep + 1), token));
      if (pool) pools.push(pool);
    }
    this.log.warn({ msg: 'upstream_gap', pools: pools.length, from: new Date(fromMs).toISOString(), to: new Date(toMs).toISOString() });
    this.backfill.schedule(pools, Math.floor(fromMs / 1000), Math.floor(toMs / 1000), 'reconnect');
  }

  /** After a start: each pool with stored candles is filled from its newest stored minute to now. */
  private async fillSinceStored(pools: PoolRecord[]): Promise<void> {
    const latest = await this.deps.backfill.latestStoredMinutes(pools.map((p) => p.id));
    const byFrom = new Map<number, PoolRecord[]>();
    for (const p of pools) {
      const from = latest.get(p.id);
      if (from !== undefined) byFrom.set(from, [...(byFrom.get(from) ?? []), p]);
    }
    const nowSec = Math.floor(this.deps.clock.now() / 1000);
    for (const [from, list] of byFrom) this.backfill.schedule(list, from, nowSec, 'restart');
  }

  /** The bound of waiting updates is reached: new ones are dropped (the app is unready). */
  get backlogFull(): boolean {
    return this.pending.full;
  }

  /** Re-reads the active pools and brings the subscriptions in line (serialized). */
  sync(): Promise<void> {
    this.syncing = this.syncing.then(() => this.doSync()).catch((err) => this.log.warn({ msg: 'pools_sync_failed', err: errorMessage(err) }));
    return this.syncing;
  }

  private async doSync(): Promise<void> {
    const pools = await this.deps.activePools();
    this.pools = pools;
    this.byId = new Map(pools.map((p) => [p.id, p]));
    this.byUpstream = new Map(pools.map((p) => [upstreamLookup(p.network_id, p.pool_address, p.token), p]));
    const wanted = pools.map((p) => subscriptionKey(this.deps.interval, p.token, upstreamPoolId(p.network_id, p.pool_address)));
    const plan = planSubscriptions(this.assignment, wanted, this.deps.subscriptionsPerSocket);
    // One socket stays open even with no pools, so the upstream's state is always known.
    const next = plan.next.length ? plan.next : [[]];
    while (this.sockets.length < next.length) this.sockets.push(this.deps.openSocket(this.sockets.length, (u) => this.onUpdate(u), (subs, from, to) => this.onGap(subs, from, to)));
    const surplus = this.sockets.splice(next.length);
    await Promise.all(surplus.map((s) => s.stop()));
    next.forEach((subs, i) => this.sockets[i].setDesired(subs));
    this.assignment = next;
    this.metrics.pools.set(pools.length);
    this.log.info({ msg: 'pools_synced', pools: pools.length, sockets: this.sockets.length });
    if (!this.restartFilled) {
      this.restartFilled = true;
      await this.fillSinceStored(pools).catch((err) => this.log.warn({ msg: 'backfill_after_start_failed', err: errorMessage(err) }));
    }
  }

  /** Reconnects every socket now and resubscribes (the ensure command). */
  async ensure(): Promise<void> {
    for (const s of this.sockets) s.reconnectNow();
    await this.sync();
  }

  private onUpdate(u: UpstreamOhlcv): void {
    const pool = this.byUpstream.get(upstreamLookup(u.n, u.pa, u.to));
    if (!pool || !isTickInterval(u.i) || u.i !== this.deps.interval) {
      this.metrics.ticks.inc({ outcome: 'ignored' });
      return;
    }
    this.lastTickAt = this.deps.clock.now();
    this.pending.push({ value: this.tickOf(pool, u.i, u) });
  }

  /** A market.ticks.v1 message of a pool's candle, stamped with the receive time and sequence. */
  private tickOf(pool: PoolRecord, interval: MarketTickMessage['interval'], c: { t: number; o: number | null; h: number | null; l: number | null; c: number | null; v: number | null }): MarketTickMessage {
    this.seq = (this.seq + 1) % Number.MAX_SAFE_INTEGER;
    return {
      pool_id: pool.id,
      chain_type: pool.chain_type,
      chain_id: pool.chain_id,
      network_id: pool.network_id,
      pool_address: pool.pool_address,
      token: pool.token,
      interval,
      open_time: c.t,
      open: c.o,
      high: c.h,
      low: c.l,
      close: c.c,
      volume: c.v,
      received_at: this.deps.clock.now(),
      seq: this.seq,
    };
  }

  status(): IngesterStatus {
    const open = this.sockets.filter((s) => s.open).length;
    this.metrics.sockets.set({ state: 'open' }, open);
    this.metrics.sockets.set({ state: 'closed' }, this.sockets.length - open);
    const refused = this.sockets.flatMap((s) => s.refused());
    this.metrics.refused.set(refused.length);
    this.metrics.pending.set(this.pending.size);
    return {
      connected: this.sockets.length > 0 && open === this.sockets.length,
      channelConfirmed: this.sockets.length > 0 && this.sockets.every((s) => s.confirmed),
      lastTickAt: this.lastTickAt === null ? null : new Date(this.lastTickAt).toISOString(),
      poolCount: this.pools.length,
      pools: this.pools.map((p) => ({
        poolId: p.id,
        chainRefId: `${p.chain_type}:${p.chain_id}`,
        chainType: p.chain_type,
        chainId: p.chain_id,
        networkId: p.network_id,
        poolAddress: p.pool_address,
        token: p.token,
      })),
      refusedPools: refused.map((r) => {
        const [, token, upstreamPool] = r.key.split('|');
        const sep = upstreamPool.indexOf(':');
        const pool = this.byUpstream.get(upstreamLookup(upstreamPool.slice(0, sep), upstreamPool.slice(sep + 1), token));
        return {
          poolId: pool?.id ?? null,
          networkId: upstreamPool.slice(0, sep),
          poolAddress: upstreamPool.slice(sep + 1),
          token,
          code: r.code,
          message: r.message,
          attempts: r.attempts,
          nextRetryAt: r.nextRetryAt === null ? null : new Date(r.nextRetryAt).toISOString(),
        };
      }),
      gaps: this.backfill.recentGaps(),
    };
  }

  async stop(): Promise<void> {
    await this.syncing;
    await Promise.all(this.sockets.map((s) => s.stop()));
    this.sockets = [];
    await this.backfill.stop();
    // What the sockets gave goes out before the process ends, if the broker takes it in time.
    const left = await this.pending.close(5_000);
    if (left) this.log.warn({ msg: 'ticks_unpublished_at_stop', count: left });
  }
}
