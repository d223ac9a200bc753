import { Counter, Gauge, type Registry } from 'prom-client';
import type { WebSocket } from 'ws';
import type { HttpKlineHubStatus, KlineCandle, KlineCandlesMessage, WsKlineOhlcvPush, WsKlineServerMessage } from '@chainpipe/contracts';
import { WsConnectionSet, type WsPeer } from '@chainpipe/http';
import { envelope, INTERVALS, movesForward, parseClientMessage, newerCandle, poolCandle, poolKey, WS_CODE, type Interval, type PoolRecord } from '@chainpipe/kline';
import type { LatestCandles } from '@chainpipe/kline-store';
import { errorMessage, type Clock, type Logger } from '@chainpipe/runtime';

interface Connection extends WsPeer {
  /** pool key → intervals pushed to this connection. */
  subs: Map<string, Set<Interval>>;
  /** `pool key|interval` → the newest candle sent to this connection, live or snapshot: what it gets next is never older (movesForward). */
  pushed: Map<string, KlineCandle>;
  /** The tail of this connection's commands: each starts when the one before has answered. */
  commands: Promise<void>;
}

export interface KlineHubDeps {
  /** Active pools with this chain and address (any case). */
  activePools: (chainType: string, chainId: number, poolAddress: string) => Promise<PoolRecord[]>;
  latest: Pick<LatestCandles, 'get'>;
  logger: Logger;
  registry: Registry;
  clock: Pick<Clock, 'now' | 'setInterval'>;
  /** A connection whose unsent backlog would pass this is too slow and is cut off. */
  maxBufferedBytes: number;
  /** Keep-alive ping period; a connection that missed the previous ping is cut off. */
  pingMs: number;
}

/** What `GET /api/v1/admin/debug/hub/status` shows (schemas/http/kline/hub-status.json). */
export type HubStatus = HttpKlineHubStatus;

/**
 * The candlestick WebSocket hub: per connection a map of subscribed pools and intervals, and an
 * index pool → connections, so a candle is serialized once and sent only to connections
 * subscribed to its pool and interval. Connections, keep-alive and the slow-client rule are the
 * WebSocket kit's (`WsConnectionSet`): a client whose backlog would pass `maxBufferedBytes` is cut
 * off instead of buffering without limit.
 *
 * A connection's commands run one at a time in arrival order: a `subscribe` waits on a database
 * look-up, and an `unsubscribe` sent right after it must find the subscription in place.
 */
export class KlineHub {
  private readonly conns: WsConnectionSet<Connection>;
  private readonly byPool = new Map<string, Set<Connection>>();
  private lastIngestAt: number | null = null;
  private lastIngestKey: string | null = null;
  private readonly log: Logger;
  private readonly metrics;

  constructor(private readonly deps: KlineHubDeps) {
    this.log = deps.logger.child({ component: 'kline-hub' });
    this.metrics = {
      pushes: new Counter({ name: 'chainpipe_kline_ws_pushes_total', help: 'ohlcv frames sent to WebSocket clients', registers: [deps.registry] }),
      behind: new Counter({ name: 'chainpipe_kline_ws_behind_dropped_total', help: 'ohlcv frames not sent to a connection: older than the candle it already had of that pool and interval', registers: [deps.registry] }),
      slow: new Counter({ name: 'chainpipe_kline_ws_slow_closed_total', help: 'Connections closed for not reading fast enough', registers: [deps.registry] }),
      conns: new Gauge({ name: 'chainpipe_kline_ws_connections', help: 'Open candlestick WebSocket connections', registers: [deps.registry] }),
    };
    this.conns = new WsConnectionSet<Connection>({
      pingIntervalMs: deps.pingMs,
      maxBufferedBytes: deps.maxBufferedBytes,
      clock: deps.clock,
      onRemove: (conn) => this.forget(conn),
      onCut: (_conn, reason, buffered) => {
        if (reason !== 'slow') return;
        this.metrics.slow.inc();
        this.log.warn({ msg: 'ws_slow_client_closed', buffered });
      },
    });
  }

  /** Starts the keep-alive pings. */
  start(): void {
    this.conns.start();
  }

  add(ws: WebSocket): void {
    const conn: Connection = { ws, subs: new Map(), pushed: new Map(), commands: Promise.resolve() };
    this.conns.add(conn);
    this.metrics.conns.set(this.conns.size);
    ws.on('message', (data, isBinary) => {
      // Binary frames are ignored on this endpoint (spec).
      if (isBinary) return;
      const text = data.toString();
      conn.commands = conn.commands.then(() => this.onText(conn, text).catch((err) => this.log.warn({ msg: 'ws_message_failed', err: errorMessage(err) })));
    });
  }

  /** A connection left the set (closed by either side, or cut off): out of the pool index too. */
  private forget(conn: Connection): void {
    for (const key of conn.subs.keys()) this.unindex(key, conn);
    this.metrics.conns.set(this.conns.size);
  }

  private unindex(key: string, conn: Connection): void {
    const set = this.byPool.get(key);
    set?.delete(conn);
    if (set && set.size === 0) this.byPool.delete(key);
  }

  private send(conn: Connection, frame: string): void {
    this.conns.send(conn, frame);
  }

  private reply(conn: Connection, type: WsKlineServerMessage['type'], data: unknown, opts: { id: string; code?: number; msg?: string }): void {
    this.send(conn, JSON.stringify(envelope(type, data, { ...opts, now: this.deps.clock.now() })));
  }

  private async onText(conn: Connection, text: string): Promise<void> {
    const cmd = parseClientMessage(text);
    if ('error' in cmd) return this.reply(conn, 'error', null, { id: cmd.error.id, code: cmd.error.code, msg: cmd.error.msg });
    if (cmd.type === 'ping') return this.reply(conn, 'pong', {}, { id: cmd.id });
    if (cmd.type === 'unsubscribe') {
      const prefix = poolKey({ ...cmd.pool, token: '' });
      const removed = [...conn.subs.keys()].filter((k) => k.startsWith(prefix) && !k.slice(prefix.length).includes(':'));
      for (const k of removed) {
        conn.subs.delete(k);
        this.unindex(k, conn);
        for (const i of INTERVALS) conn.pushed.delete(pushedKey(k, i));
      }
      return this.reply(conn, 'unsubscribed', { key: removed[0] ?? `${prefix}base`, removed_keys: removed }, { id: cmd.id });
    }
    let pools: PoolRecord[];
    try {
      pools = await this.deps.activePools(cmd.pool.chain_type, cmd.pool.chain_id, cmd.pool.pool_address);
    } catch (err) {
      this.log.warn({ msg: 'ws_pool_lookup_failed', err: errorMessage(err) });
      return this.reply(conn, 'error', null, { id: cmd.id, code: WS_CODE.internal, msg: 'subscribe: internal error' });
    }
    if (pools.length === 0) return this.reply(conn, 'error', null, { id: cmd.id, code: WS_CODE.invalidMessage, msg: 'subscribe: active pool not found' });
    if (pools.length > 1) return this.reply(conn, 'error', null, { id: cmd.id, code: WS_CODE.internal, msg: 'subscribe: ambiguous active pool' });
    const pool = pools[0];
    const key = poolKey(pool);
    if (!this.conns.has(conn)) return;
    conn.subs.set(key, new Set(cmd.intervals));
    let set = this.byPool.get(key);
    if (!set) this.byPool.set(key, (set = new Set()));
    set.add(conn);
    this.reply(conn, 'subscribed', { key, token: pool.token, intervals: cmd.intervals }, { id: cmd.id });
    const latest = await this.deps.latest.get(key, cmd.intervals).catch(() => new Map<string, KlineCandle>());
    // A live push may have left while Redis was read: the snapshot is the newer of the two.
    const first = cmd.intervals.map((i) => newerCandle(latest.get(i), conn.pushed.get(pushedKey(key, i)))).find((c) => c !== undefined);
    if (!first) return;
    // Remembered as sent: a live record older than the snapshot is not pushed after it.
    conn.pushed.set(pushedKey(key, first.interval), first);
    this.reply(conn, 'ohlcv', pushData(first), { id: cmd.id, msg: 'snapshot' });
  }

  /**
   * A pool's stored candles from kline.candles.v2, in order: each pushed to the connections
   * subscribed to its pool and interval (the pool's connections are looked up once per record),
   * unless that connection already has a newer version of it (movesForward).
   */
  deliver(message: KlineCandlesMessage): void {
    const key = poolKey(message);
    this.lastIngestAt = this.deps.clock.now();
    this.lastIngestKey = key;
    const set = this.byPool.get(key);
    if (!set) return;
    for (const values of message.candles) {
      // built once a connection wants this interval: most of a record's intervals have no subscriber
      let pushed: { candle: KlineCandle; frame: string } | undefined;
      let sentKey: string | undefined;
      for (const conn of set) {
        if (!conn.subs.get(key)?.has(values.interval)) continue;
        sentKey ??= pushedKey(key, values.interval);
        const held = conn.pushed.get(sentKey);
        if (!movesForward(held, values.open_time, message.updated_at)) {
          this.metrics.behind.inc();
          continue;
        }
        if (!pushed) {
          const candle = poolCandle(message, values);
          pushed = { candle, frame: JSON.stringify(envelope('ohlcv', pushData(candle), { now: this.deps.clock.now() })) };
        }
        conn.pushed.set(sentKey, pushed.candle);
        this.send(conn, pushed.frame);
        this.metrics.pushes.inc();
      }
    }
  }

  status(): HubStatus {
    return {
      wsCount: this.conns.size,
      poolCount: this.byPool.size,
      pools: [...this.byPool].map(([key, set]) => ({ key, clientCount: set.size })),
      lastIngestAt: this.lastIngestAt === null ? null : new Date(this.lastIngestAt).toISOString(),
      lastIngestKey: this.lastIngestKey,
    };
  }

  /** Closes every connection with 1001 (going away) and waits for them, up to 2 s. */
  async closeAll(): Promise<void> {
    await this.conns.closeAll(2_000);
  }
}

const pushedKey = (key: string, interval: string) => `${key}|${interval}`;

/** The `ohlcv` push's data (spec, "Real-time push data"). */
export function pushData(c: KlineCandle): WsKlineOhlcvPush {
  return {
    chain_type: c.chain_type,
    chain_id: c.chain_id,
    pool_address: c.pool_address,
    token: c.token,
    interval: c.interval,
    open_time: c.open_time,
    open: c.open,
    high: c.high,
    low: c.low,
    close: c.close,
    volume: c.volume,
  };
}
