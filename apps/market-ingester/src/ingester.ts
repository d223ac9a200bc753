import { Counter, Gauge, type Registry } from 'prom-client';
import type { MarketTickMessage } from '@chainpipe/contracts';
import type { OutgoingMessage } from '@chainpipe/kafka';
import { isTickInterval, planSubscriptions, upstreamPoolId, type Assignment, type PoolRecord, type UpstreamOhlcv } from '@chainpipe/kline';
import type { IngesterStatus } from '@chainpipe/kline-store';
import { errorMessage, type Clock, type Logger } from '@chainpipe/runtime';
import { PendingTicks } from './pending-ticks';
import { subscriptionKey, type UpstreamSocket } from './upstream-socket';

export interface MarketIngesterDeps {
  activePools: () => Promise<PoolRecord[]>;
  publish: (messages: OutgoingMessage<MarketTickMessage>[]) => Promise<void>;
  /** Opens (starts) a socket; it reports updates through `onUpdate`. */
  openSocket: (index: number, onUpdate: (u: UpstreamOhlcv) => void) => UpstreamSocket;
  interval: MarketTickMessage['interval'];
  subscriptionsPerSocket: number;
  logger: Logger;
  registry: Registry;
  clock: Pick<Clock, 'now' | 'setTimeout'>;
  /** Updates waiting for the broker at most (`MARKET_MAX_PENDING_TICKS`): past it they are dropped and the ingester is unready. */
  maxPendingTicks: number;
  /** Wait before a failed publish is tried again: doubling from `initialMs` to `maxMs`. */
  publishRetry: { initialMs: number; maxMs: number };
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
 * unready (`backlogFull`) until the backlog is below it again.
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
      onPublished: (n) => this.metrics.ticks.inc({ outcome: 'published' }, n),
      onFailed: (n, err) => {
        this.metrics.ticks.inc({ outcome: 'publish_failed' }, n);
        this.log.warn({ msg: 'tick_publish_failed', waiting: this.pending.size, err: errorMessage(err) });
      },
      onDropped: (m) => {
        this.metrics.ticks.inc({ outcome: 'dropped' });
        this.log.warn({ msg: 'tick_dropped_backlog_full', poolId: m.value.pool_id, openTime: m.value.open_time, waiting: this.pending.size });
      },
    });
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
    this.byUpstream = new Map(pools.map((p) => [upstreamLookup(p.network_id, p.pool_address, p.token), p]));
    const wanted = pools.map((p) => subscriptionKey(this.deps.interval, p.token, upstreamPoolId(p.network_id, p.pool_address)));
    const plan = planSubscriptions(this.assignment, wanted, this.deps.subscriptionsPerSocket);
    // One socket stays open even with no pools, so the upstream's state is always known.
    const next = plan.next.length ? plan.next : [[]];
    while (this.sockets.length < next.length) this.sockets.push(this.deps.openSocket(this.sockets.length, (u) => this.onUpdate(u)));
    const surplus = this.sockets.splice(next.length);
    await Promise.all(surplus.map((s) => s.stop()));
    next.forEach((subs, i) => this.sockets[i].setDesired(subs));
    this.assignment = next;
    this.metrics.pools.set(pools.length);
    this.log.info({ msg: 'pools_synced', pools: pools.length, sockets: this.sockets.length });
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
    const receivedAt = this.deps.clock.now();
    this.lastTickAt = receivedAt;
    this.seq = (this.seq + 1) % Number.MAX_SAFE_INTEGER;
    const value: MarketTickMessage = {
      pool_id: pool.id,
      chain_type: pool.chain_type,
      chain_id: pool.chain_id,
      network_id: pool.network_id,
      pool_address: pool.pool_address,
      token: pool.token,
      interval: u.i,
      open_time: u.t,
      open: u.o,
      high: u.h,
      low: u.l,
      close: u.c,
      volume: u.v,
      received_at: receivedAt,
      seq: this.seq,
    };
    this.pending.push({ value });
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
    };
  }

  async stop(): Promise<void> {
    await this.syncing;
    await Promise.all(this.sockets.map((s) => s.stop()));
    this.sockets = [];
    // What the sockets gave goes out before the process ends, if the broker takes it in time.
    const left = await this.pending.close(5_000);
    if (left) this.log.warn({ msg: 'ticks_unpublished_at_stop', count: left });
  }
}
