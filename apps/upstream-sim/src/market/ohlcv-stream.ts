import { randomUUID } from 'node:crypto';
import { WebSocketServer, type WebSocket } from 'ws';
import { WsConnectionSet, refuseUpgrade, type UpgradeHandler, type WsPeer } from '@chainpipe/http';
import {
  API_KEY_HEADER,
  API_KEY_QUERY,
  OHLCV_CHANNEL,
  OHLCV_CHANNEL_CODE,
  UPSTREAM_CODE,
  UPSTREAM_INTERVALS,
  isTokenSide,
  type UpstreamOhlcv,
} from '@chainpipe/kline';
import type { Logger } from '@chainpipe/runtime';

/** Path of the stream, as `wss://stream.coingecko.com/v1`. */
export const OHLCV_STREAM_PATH = '/v1';

const INTERVAL_SECONDS: Record<string, number> = { '1s': 1, '1m': 60, '5m': 300, '15m': 900, '1h': 3600, '2h': 7200, '4h': 14_400, '8h': 28_800, '12h': 43_200, '1d': 86_400 };

/** Codes the simulator uses for refusals the documentation does not spell out. */
export const SIM_ERROR = { notSubscribed: 4000, badData: 4001, poolRefused: 4004, limitReached: 4029 } as const;

export interface OhlcvStreamOptions {
  logger: Logger;
  /** Empty: any non-empty key is accepted. */
  apiKey: string;
  tickMs: number;
  maxSubscriptionsPerSocket: number;
  /** WebSocket ping interval; a socket that missed the previous ping is cut off. */
  pingMs: number;
  /** A socket whose unsent backlog would pass this is cut off (16 MiB by default). */
  maxBufferedBytes?: number;
  now?: () => number;
  random?: () => number;
}

interface Candle {
  t: number;
  o: number;
  h: number;
  l: number;
  c: number;
  v: number;
}

/** A minute of what the stream sent of a pool and side: the 1s candles' extremes, last close and the final volume of each second. */
interface Minute {
  o: number;
  h: number;
  l: number;
  c: number;
  /** open time of a second → its candle's last volume */
  seconds: Map<number, number>;
}

/** Minutes kept a pool and side for the REST OHLCV (a day). */
const MINUTES_KEPT = 1440;

interface Client extends WsPeer {
  channel: boolean;
  /** `interval|token|network:address` */
  subs: Set<string>;
}

/**
 * The CoinGecko WebSocket API's OnchainOHLCV channel for any pool it is asked for: a random-walk
 * price per pool and side, and for each subscription a moving candle of its interval, sent as the
 * documented short-key updates every `tickMs`. `dropAll` cuts every connection (reconnect tests);
 * `refusePool` makes a `set_pools` naming that pool fail as a whole, as an upstream answers a
 * pool it does not serve (an error reply, nothing subscribed), until `acceptPool`.
 */
export class OhlcvStreamServer {
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: 1024 * 1024 });
  private readonly clients: WsConnectionSet<Client>;
  private readonly prices = new Map<string, number>();
  private readonly candles = new Map<string, Candle>();
  private readonly timers: NodeJS.Timeout[] = [];
  /** Wall-clock ms until which new connections are refused (`dropAll`'s outage). */
  private unreachableUntil = 0;
  /** Every subscription ever asked for (`interval|token|network:address`): they move on every tick. */
  private readonly tracked = new Set<string>();
  /** `token|network:address` (lower case) → its minutes, oldest first: what `ohlcv` answers. */
  private readonly minutes = new Map<string, Map<number, Minute>>();
  /** `network:address` of pools whose `set_pools` is refused (`refusePool`), lower case. */
  private readonly refusedPools = new Set<string>();
  private readonly now: () => number;
  private readonly random: () => number;
  private readonly log: Logger;

  constructor(private readonly opts: OhlcvStreamOptions) {
    this.now = opts.now ?? Date.now;
    this.random = opts.random ?? Math.random;
    this.log = opts.logger.child({ component: 'ohlcv-stream' });
    this.clients = new WsConnectionSet<Client>({ pingIntervalMs: opts.pingMs, maxBufferedBytes: opts.maxBufferedBytes ?? 16 * 1024 * 1024 });
    this.clients.start();
    this.timers.push(setInterval(() => this.tick(), opts.tickMs));
    for (const t of this.timers) t.unref();
  }

  /** Takes over an HTTP upgrade on the stream path; answers 401 without a key. */
  readonly upgrade: UpgradeHandler = (req, socket, head) => {
    const url = new URL(req.url ?? '/', 'http://sim');
    if (url.pathname !== OHLCV_STREAM_PATH) return false;
    if (Date.now() < this.unreachableUntil) {
      refuseUpgrade(socket, 503, { error: 'stream unavailable' });
      return true;
    }
    const key = url.searchParams.get(API_KEY_QUERY) ?? req.headers[API_KEY_HEADER];
    const ok = typeof key === 'string' && key !== '' && (this.opts.apiKey === '' || key === this.opts.apiKey);
    if (!ok) refuseUpgrade(socket, 401, { error: 'invalid or missing API key' });
    else this.wss.handleUpgrade(req, socket, head, (ws) => this.accept(ws));
    return true;
  };

  private accept(ws: WebSocket): void {
    const client: Client = { ws, channel: false, subs: new Set() };
    this.clients.add(client);
    const sid = randomUUID();
    this.send(client, { code: UPSTREAM_CODE.connected, message: 'Connection established', uuid: sid });
    this.send(client, { type: 'welcome', sid });
    ws.on('message', (raw, isBinary) => {
      if (!isBinary) this.onCommand(client, raw.toString());
    });
  }

  private onCommand(client: Client, text: string): void {
    let cmd: any;
    try {
      cmd = JSON.parse(text);
    } catch {
      return this.send(client, { code: SIM_ERROR.badData, message: 'Invalid JSON' });
    }
    let channel: string | undefined;
    try {
      channel = JSON.parse(String(cmd?.identifier ?? '')).channel;
    } catch {
      channel = undefined;
    }
    const identifier = JSON.stringify({ channel });
    if (cmd?.command === 'subscribe') {
      if (channel !== OHLCV_CHANNEL) return this.send(client, { type: 'reject_subscription', identifier });
      client.channel = true;
      return this.send(client, { type: 'confirm_subscription', identifier });
    }
    if (cmd?.command === 'unsubscribe') {
      client.channel = false;
      client.subs.clear();
      return;
    }
    if (cmd?.command !== 'message') return this.send(client, { code: SIM_ERROR.badData, message: 'Unknown command' });
    if (!client.channel || channel !== OHLCV_CHANNEL) return this.send(client, { code: SIM_ERROR.notSubscribed, message: 'Subscribe to the channel first' });
    let data: any;
    try {
      data = JSON.parse(String(cmd.data));
    } catch {
      return this.send(client, { code: SIM_ERROR.badData, message: 'data must be a JSON string' });
    }
    const pools = data?.['network_id:pool_addresses'];
    const interval = data?.interval ?? '1m';
    const token = data?.token ?? 'base';
    if (!Array.isArray(pools) || !pools.every((p) => typeof p === 'string' && /^[^:]+:.+$/.test(p))) {
      return this.send(client, { code: SIM_ERROR.badData, message: 'network_id:pool_addresses must be a list of network_id:pool_address' });
    }
    if (!(UPSTREAM_INTERVALS as readonly string[]).includes(interval) || !isTokenSide(token)) {
      return this.send(client, { code: SIM_ERROR.badData, message: 'invalid interval or token' });
    }
    const keys = pools.map((p: string) => `${interval}|${token}|${p}`);
    if (data.action === 'unset_pools') {
      for (const k of keys) client.subs.delete(k);
      return this.send(client, { code: UPSTREAM_CODE.ok, message: `Unsubscribed from ${pools.join(', ')}` });
    }
    if (data.action !== 'set_pools') return this.send(client, { code: SIM_ERROR.badData, message: 'action must be set_pools or unset_pools' });
    const refused = pools.find((p: string) => this.refusedPools.has(p.toLowerCase()));
    if (refused !== undefined) return this.send(client, { code: SIM_ERROR.poolRefused, message: `Pool not found: ${refused}` });
    const total = new Set([...client.subs, ...keys]).size;
    if (total > this.opts.maxSubscriptionsPerSocket) {
      return this.send(client, { code: SIM_ERROR.limitReached, message: `Subscription limit of ${this.opts.maxSubscriptionsPerSocket} per socket reached` });
    }
    for (const k of keys) client.subs.add(k);
    this.send(client, { code: UPSTREAM_CODE.ok, message: `Subscribed to ${pools.join(', ')}` });
  }

  private tick(): void {
    const nowSec = Math.floor(this.now() / 1000);
    // The market moves whether anyone listens or not: every subscription ever asked for moves
    // once a tick, and each socket subscribed to it gets that same update. A socket that was away
    // missed those updates, as from a real provider; the REST OHLCV still has them.
    for (const client of this.clients) for (const sub of client.subs) this.tracked.add(sub);
    const moved = new Set<string>();
    const updates = new Map<string, UpstreamOhlcv>();
    for (const sub of this.tracked) {
      const [interval, token, pool] = sub.split('|');
      const priceKey = `${token}|${pool}`;
      if (!moved.has(priceKey)) {
        moved.add(priceKey);
        this.walk(priceKey);
      }
      updates.set(sub, this.candleUpdate(sub, interval, token as 'base' | 'quote', pool, nowSec));
    }
    for (const client of this.clients) for (const sub of client.subs) this.send(client, updates.get(sub)!);
  }

  private walk(priceKey: string): number {
    const prev = this.prices.get(priceKey) ?? 1 + this.random() * 100;
    const next = Math.max(1e-9, prev * (1 + (this.random() - 0.5) * 0.01));
    this.prices.set(priceKey, next);
    return next;
  }

  private candleUpdate(sub: string, interval: string, token: 'base' | 'quote', pool: string, nowSec: number): UpstreamOhlcv {
    const price = this.prices.get(`${token}|${pool}`) ?? this.walk(`${token}|${pool}`);
    const len = INTERVAL_SECONDS[interval];
    const t = nowSec - (nowSec % len);
    const cur = this.candles.get(sub);
    const volume = this.random() * 1000;
    const candle: Candle = cur && cur.t === t
      ? { t, o: cur.o, h: Math.max(cur.h, price), l: Math.min(cur.l, price), c: price, v: cur.v + volume }
      : { t, o: price, h: price, l: price, c: price, v: volume };
    this.candles.set(sub, candle);
    if (interval === '1s') this.record(`${token}|${pool.toLowerCase()}`, candle);
    const sep = pool.indexOf(':');
    return { ch: OHLCV_CHANNEL_CODE, n: pool.slice(0, sep), pa: pool.slice(sep + 1), to: token, i: interval, o: candle.o, h: candle.h, l: candle.l, c: candle.c, v: candle.v, t };
  }

  /** Keeps a 1s candle sent in its minute (the REST OHLCV's source: what the stream sent, nothing else). */
  private record(key: string, candle: Candle): void {
    let minutes = this.minutes.get(key);
    if (!minutes) this.minutes.set(key, (minutes = new Map()));
    const start = candle.t - (candle.t % 60);
    const m = minutes.get(start);
    if (!m) {
      minutes.set(start, { o: candle.o, h: candle.h, l: candle.l, c: candle.c, seconds: new Map([[candle.t, candle.v]]) });
      if (minutes.size > MINUTES_KEPT) minutes.delete(minutes.keys().next().value!);
      return;
    }
    m.h = Math.max(m.h, candle.h);
    m.l = Math.min(m.l, candle.l);
    m.c = candle.c;
    m.seconds.set(candle.t, candle.v);
  }

  /**
   * The pool's candles of `periodSeconds` (a multiple of 60) starting before `beforeSec`, newest
   * first, at most `limit`, made of the 1s candles the stream sent: open of the first second,
   * extremes, close of the last, volume the sum of each second's last volume. Periods without
   * any second sent are left out (the upstream's default, `include_empty_intervals` false).
   */
  ohlcv(pool: string, token: 'base' | 'quote', periodSeconds: number, beforeSec: number, limit: number): [number, number, number, number, number, number][] {
    const minutes = this.minutes.get(`${token}|${pool.toLowerCase()}`);
    if (!minutes) return [];
    const periods = new Map<number, [number, number, number, number, number, number]>();
    for (const [start, m] of minutes) {
      const period = start - (start % periodSeconds);
      if (period >= beforeSec) continue;
      let volume = 0;
      for (const v of m.seconds.values()) volume += v;
      const p = periods.get(period);
      if (!p) periods.set(period, [period, m.o, m.h, m.l, m.c, volume]);
      else {
        p[2] = Math.max(p[2], m.h);
        p[3] = Math.min(p[3], m.l);
        p[4] = m.c;
        p[5] += volume;
      }
    }
    return [...periods.values()].sort((a, b) => b[0] - a[0]).slice(0, limit);
  }

  private send(client: Client, body: unknown): void {
    this.clients.send(client, JSON.stringify(body));
  }

  /** Cuts every connection without a close handshake, as a network failure would, and refuses new ones for `outageMs` (wall clock). */
  dropAll(outageMs = 0): number {
    this.unreachableUntil = Date.now() + outageMs;
    const n = this.clients.size;
    for (const c of [...this.clients]) c.ws.terminate();
    this.log.info({ msg: 'ohlcv_connections_dropped', count: n });
    return n;
  }

  /** From now on a `set_pools` naming `pool` (`network:address`) is refused. */
  refusePool(pool: string): void {
    this.refusedPools.add(pool.toLowerCase());
  }

  /** Lifts `refusePool`. */
  acceptPool(pool: string): void {
    this.refusedPools.delete(pool.toLowerCase());
  }

  status(): { sockets: { subscriptions: number; channel: boolean; pools: string[] }[]; refusedPools: string[] } {
    return {
      sockets: [...this.clients].map((c) => ({ subscriptions: c.subs.size, channel: c.channel, pools: [...c.subs] })),
      refusedPools: [...this.refusedPools],
    };
  }

  /** Stops the ticks and closes every socket (1001), cutting those that do not close within a second. */
  async close(): Promise<void> {
    for (const t of this.timers) clearInterval(t);
    await this.clients.closeAll(1_000);
    this.wss.close();
  }
}
