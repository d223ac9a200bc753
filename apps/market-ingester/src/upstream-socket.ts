import WebSocket from 'ws';
import {
  API_KEY_HEADER,
  parseServerMessage,
  poolsCommand,
  subscribeCommand,
  type TokenSide,
  type UpstreamOhlcv,
} from '@chainpipe/kline';
import { backoffMs, errorMessage, systemClock, type Clock, type Logger, type Timer } from '@chainpipe/runtime';

export interface UpstreamSocketOptions {
  index: number;
  url: string;
  apiKey: string;
  pingMs: number;
  reconnect: { initialMs: number; maxMs: number };
  onUpdate: (update: UpstreamOhlcv) => void;
  onStateChange?: () => void;
  logger: Logger;
  /** Time of the reconnect backoff, the pings and the silence check. */
  clock?: Pick<Clock, 'now' | 'setTimeout' | 'setInterval'>;
  /** The backoff's jitter; injected for a known sequence in tests. */
  random?: () => number;
}

/** `interval|token|network_id:pool_address`: one upstream subscription. */
export const subscriptionKey = (interval: string, token: string, upstreamPool: string) => `${interval}|${token}|${upstreamPool}`;

/**
 * One connection to the OnchainOHLCV channel. It connects with the key, subscribes to the
 * channel after the welcome, and once confirmed brings the upstream's pool set to `desired`
 * with `set_pools`/`unset_pools` (grouped by interval and token). On any loss (close, error, two
 * silent ping intervals) it reconnects with exponential backoff and subscribes everything again.
 */
export class UpstreamSocket {
  private ws?: WebSocket;
  private desired = new Set<string>();
  private sent = new Set<string>();
  private attempt = 0;
  private stopped = false;
  private reconnectTimer?: Timer;
  private pingTimer?: Timer;
  private lastHeard = 0;
  private readonly clock: Pick<Clock, 'now' | 'setTimeout' | 'setInterval'>;
  private readonly log: Logger;
  open = false;
  confirmed = false;

  constructor(private readonly opts: UpstreamSocketOptions) {
    this.clock = opts.clock ?? systemClock;
    this.log = opts.logger.child({ component: 'upstream-socket', socket: opts.index });
  }

  get subscriptions(): number {
    return this.desired.size;
  }

  start(): void {
    this.connect();
    this.pingTimer = this.clock.setInterval(() => this.keepAlive(), this.opts.pingMs).unref();
  }

  setDesired(subs: Iterable<string>): void {
    this.desired = new Set(subs);
    if (this.confirmed) this.sync();
  }

  /** Drops the connection and reconnects at once (the ensure command). */
  reconnectNow(): void {
    this.attempt = 0;
    if (this.ws && this.ws.readyState !== WebSocket.CLOSED) this.ws.terminate();
    else {
      this.reconnectTimer?.cancel();
      this.connect();
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.reconnectTimer?.cancel();
    this.pingTimer?.cancel();
    const ws = this.ws;
    if (!ws || ws.readyState === WebSocket.CLOSED) return;
    // Waits on the socket's close handshake itself, so on the wall clock.
    await new Promise<void>((resolve) => {
      const t = setTimeout(() => {
        ws.terminate();
        resolve();
      }, 2000);
      ws.once('close', () => {
        clearTimeout(t);
        resolve();
      });
      ws.close(1000, 'shutdown');
    });
  }

  private connect(): void {
    if (this.stopped) return;
    const ws = new WebSocket(this.opts.url, { headers: { [API_KEY_HEADER]: this.opts.apiKey }, handshakeTimeout: 10_000, maxPayload: 4 * 1024 * 1024 });
    this.ws = ws;
    this.lastHeard = this.clock.now();
    ws.on('open', () => {
      this.open = true;
      this.lastHeard = this.clock.now();
      this.log.info({ msg: 'upstream_connected' });
      this.opts.onStateChange?.();
    });
    ws.on('ping', () => (this.lastHeard = this.clock.now()));
    ws.on('pong', () => (this.lastHeard = this.clock.now()));
    ws.on('message', (data, isBinary) => {
      this.lastHeard = this.clock.now();
      if (!isBinary) this.onMessage(data.toString());
    });
    ws.on('unexpected-response', (_req, res) => {
      this.log.warn({ msg: 'upstream_refused', status: res.statusCode });
      ws.terminate();
    });
    ws.on('error', (err) => this.log.warn({ msg: 'upstream_error', err: errorMessage(err) }));
    ws.on('close', (code) => {
      if (this.ws !== ws) return;
      this.open = false;
      this.confirmed = false;
      this.sent.clear();
      this.opts.onStateChange?.();
      if (this.stopped) return;
      // The first retry after a working session is immediate; failures in a row back off.
      const wait = this.attempt === 0 ? 0 : backoffMs(this.attempt - 1, this.opts.reconnect.initialMs, this.opts.reconnect.maxMs, this.opts.random);
      this.attempt += 1;
      this.log.warn({ msg: 'upstream_disconnected', code, reconnectInMs: wait, attempt: this.attempt });
      this.reconnectTimer = this.clock.setTimeout(() => this.connect(), wait).unref();
    });
  }

  private onMessage(text: string): void {
    const m = parseServerMessage(text);
    switch (m.kind) {
      case 'welcome':
        this.send(subscribeCommand());
        return;
      case 'confirm':
        this.confirmed = true;
        this.attempt = 0;
        this.sent.clear();
        this.log.info({ msg: 'upstream_channel_confirmed', subscriptions: this.desired.size });
        this.sync();
        this.opts.onStateChange?.();
        return;
      case 'reject':
        this.log.error({ msg: 'upstream_channel_rejected' });
        this.ws?.terminate();
        return;
      case 'ohlcv':
        this.opts.onUpdate(m.update);
        return;
      case 'error':
        this.log.warn({ msg: 'upstream_error_reply', code: m.code, message: m.message.slice(0, 300) });
        return;
      default:
        return;
    }
  }

  /** Sends the difference between what the upstream has and what is wanted. */
  private sync(): void {
    const group = (keys: string[]) => {
      const out = new Map<string, { interval: string; token: TokenSide; pools: string[] }>();
      for (const k of keys) {
        const [interval, token, pool] = k.split('|');
        const g = out.get(`${interval}|${token}`) ?? { interval, token: token as TokenSide, pools: [] };
        g.pools.push(pool);
        out.set(`${interval}|${token}`, g);
      }
      return [...out.values()];
    };
    const removes = [...this.sent].filter((k) => !this.desired.has(k));
    const adds = [...this.desired].filter((k) => !this.sent.has(k));
    for (const g of group(removes)) this.send(poolsCommand('unset_pools', g.pools, g.interval, g.token));
    for (const g of group(adds)) this.send(poolsCommand('set_pools', g.pools, g.interval, g.token));
    for (const k of removes) this.sent.delete(k);
    for (const k of adds) this.sent.add(k);
  }

  private keepAlive(): void {
    const ws = this.ws;
    if (!ws || ws.readyState !== WebSocket.OPEN) return;
    if (this.clock.now() - this.lastHeard > 2 * this.opts.pingMs) {
      this.log.warn({ msg: 'upstream_silent', silentMs: this.clock.now() - this.lastHeard });
      ws.terminate();
      return;
    }
    ws.ping();
  }

  private send(body: unknown): void {
    if (this.ws?.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(body));
  }
}
