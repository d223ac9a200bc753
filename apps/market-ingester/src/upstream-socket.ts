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
  /** The channel is confirmed again after a loss: the subscriptions it held and the time nothing was heard (from the last message before the loss to now). */
  onGap?: (subscriptions: string[], fromMs: number, toMs: number) => void;
  logger: Logger;
  /** Time of the reconnect backoff, the pings and the silence check. */
  clock?: Pick<Clock, 'now' | 'setTimeout' | 'setInterval'>;
  /** The backoff's jitter; injected for a known sequence in tests. */
  random?: () => number;
}

/** `interval|token|network_id:pool_address`: one upstream subscription. */
export const subscriptionKey = (interval: string, token: string, upstreamPool: string) => `${interval}|${token}|${upstreamPool}`;

/** A subscription the upstream refused: what it answered, how often, and when it is asked again. */
export interface RefusedSubscription {
  key: string;
  code: number;
  message: string;
  /** Refusals in a row. */
  attempts: number;
  /** Unix ms of the next `set_pools` for it; null while one is awaiting its answer. */
  nextRetryAt: number | null;
}

interface Refusal {
  code: number;
  message: string;
  attempts: number;
  /** Unix ms; Infinity while a retry is awaiting its answer. */
  retryAt: number;
}

/** A pools command sent and not answered yet: the upstream answers each in turn (`code` 2000 or an error). */
interface PendingCommand {
  action: 'set_pools' | 'unset_pools';
  keys: string[];
}

/**
 * One connection to the OnchainOHLCV channel. It connects with the key, subscribes to the
 * channel after the welcome, and once confirmed brings the upstream's pool set to `desired`
 * with `set_pools`/`unset_pools` (grouped by interval and token). On any loss (close, error, two
 * silent ping intervals) it reconnects with exponential backoff and subscribes everything again.
 *
 * The upstream answers each pools command, in the order sent, with `code` 2000 or an error; an
 * error to a `set_pools` refuses every subscription it named. Those are not taken as subscribed:
 * each is asked for again on its own (one pool the upstream refuses keeps no other out) after the
 * reconnect backoff, doubling per refusal in a row, until it is accepted or no longer wanted
 * (`refused()`).
 */
export class UpstreamSocket {
  private ws?: WebSocket;
  private desired = new Set<string>();
  private sent = new Set<string>();
  private pending: PendingCommand[] = [];
  private readonly refusals = new Map<string, Refusal>();
  private retryTimer?: Timer;
  private attempt = 0;
  private stopped = false;
  private reconnectTimer?: Timer;
  private pingTimer?: Timer;
  private lastHeard = 0;
  /** The last message heard before the channel was lost, until it is confirmed again. */
  private lostAt?: number;
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

  /** The wanted subscriptions the upstream refused, with their next retry. */
  refused(): RefusedSubscription[] {
    return [...this.refusals].map(([key, r]) => ({ key, code: r.code, message: r.message, attempts: r.attempts, nextRetryAt: Number.isFinite(r.retryAt) ? r.retryAt : null }));
  }

  start(): void {
    this.connect();
    this.pingTimer = this.clock.setInterval(() => this.keepAlive(), this.opts.pingMs).unref();
  }

  setDesired(subs: Iterable<string>): void {
    this.desired = new Set(subs);
    for (const k of this.refusals.keys()) if (!this.desired.has(k)) this.refusals.delete(k);
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
    this.retryTimer?.cancel();
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
      if (this.confirmed) this.lostAt ??= this.lastHeard;
      this.open = false;
      this.confirmed = false;
      this.sent.clear();
      this.answersLost();
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
        this.answersLost();
        this.log.info({ msg: 'upstream_channel_confirmed', subscriptions: this.desired.size });
        if (this.lostAt !== undefined) {
          this.opts.onGap?.([...this.desired], this.lostAt, this.clock.now());
          this.lostAt = undefined;
        }
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
      case 'ack': {
        const answered = this.pending.shift();
        let accepted = 0;
        if (answered?.action === 'set_pools') for (const k of answered.keys) if (this.refusals.delete(k)) accepted++;
        if (accepted) this.opts.onStateChange?.();
        return;
      }
      case 'error': {
        const answered = this.pending.shift();
        this.log.warn({ msg: 'upstream_error_reply', code: m.code, message: m.message.slice(0, 300), action: answered?.action, subscriptions: answered?.keys.length });
        if (answered?.action === 'set_pools') this.onRefused(answered.keys, m.code, m.message.slice(0, 300));
        return;
      }
      default:
        return;
    }
  }

  /** Answers that will not come (the connection or the channel started over): retries in flight are due at once. */
  private answersLost(): void {
    this.pending = [];
    const now = this.clock.now();
    for (const r of this.refusals.values()) if (r.retryAt === Infinity) r.retryAt = now;
  }

  /** The upstream refused a `set_pools`: its subscriptions are not held, and each is retried on its own after a backoff. */
  private onRefused(keys: string[], code: number, message: string): void {
    const now = this.clock.now();
    for (const k of keys) {
      if (!this.desired.has(k)) continue;
      this.sent.delete(k);
      const attempts = (this.refusals.get(k)?.attempts ?? 0) + 1;
      const wait = backoffMs(attempts - 1, this.opts.reconnect.initialMs, this.opts.reconnect.maxMs, this.opts.random);
      this.refusals.set(k, { code, message, attempts, retryAt: now + wait });
    }
    this.scheduleRetry();
    this.opts.onStateChange?.();
  }

  /** One timer, for the earliest refused subscription due again. */
  private scheduleRetry(): void {
    this.retryTimer?.cancel();
    this.retryTimer = undefined;
    let due = Infinity;
    for (const r of this.refusals.values()) due = Math.min(due, r.retryAt);
    if (due === Infinity || this.stopped) return;
    this.retryTimer = this.clock
      .setTimeout(() => {
        this.retryTimer = undefined;
        // Not confirmed: the confirmation's sync sends what is due.
        if (this.confirmed) this.sync();
      }, Math.max(0, due - this.clock.now()))
      .unref();
  }

  /** Sends the difference between what the upstream has and what is wanted. */
  private sync(): void {
    const group = (keys: string[]) => {
      const out = new Map<string, { interval: string; token: TokenSide; pools: string[]; keys: string[] }>();
      for (const k of keys) {
        const [interval, token, pool] = k.split('|');
        const g = out.get(`${interval}|${token}`) ?? { interval, token: token as TokenSide, pools: [], keys: [] };
        g.pools.push(pool);
        g.keys.push(k);
        out.set(`${interval}|${token}`, g);
      }
      return [...out.values()];
    };
    const now = this.clock.now();
    const removes = [...this.sent].filter((k) => !this.desired.has(k));
    // Refused ones wait for their retry, and go one a command.
    const adds: string[] = [];
    const retries: string[] = [];
    for (const k of this.desired) {
      if (this.sent.has(k)) continue;
      const refusal = this.refusals.get(k);
      if (!refusal) adds.push(k);
      else if (refusal.retryAt <= now) retries.push(k);
    }
    for (const g of group(removes)) this.sendPools('unset_pools', g);
    for (const g of group(adds)) this.sendPools('set_pools', g);
    for (const k of retries) {
      this.refusals.get(k)!.retryAt = Infinity;
      this.sendPools('set_pools', group([k])[0]);
    }
    for (const k of removes) this.sent.delete(k);
    for (const k of [...adds, ...retries]) this.sent.add(k);
    this.scheduleRetry();
  }

  /** Sends a pools command and expects its answer in turn. */
  private sendPools(action: PendingCommand['action'], g: { interval: string; token: TokenSide; pools: string[]; keys: string[] }): void {
    if (this.send(poolsCommand(action, g.pools, g.interval, g.token))) this.pending.push({ action, keys: g.keys });
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

  private send(body: unknown): boolean {
    if (this.ws?.readyState !== WebSocket.OPEN) return false;
    this.ws.send(JSON.stringify(body));
    return true;
  }
}
