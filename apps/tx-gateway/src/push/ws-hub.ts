import { randomUUID } from 'node:crypto';
import type http from 'node:http';
import type { Duplex } from 'node:stream';
import { Counter, Gauge, type Registry } from 'prom-client';
import { WebSocketServer, type WebSocket } from 'ws';
import type { WsTxServerReply } from '@chainpipe/contracts';
import { WsConnectionSet, refuseUpgrade, type Principal, type UpgradeHandler, type WsPeer } from '@chainpipe/http';
import { errorMessage, isDependencyUnavailable, systemClock, type Clock, type Logger } from '@chainpipe/runtime';
import { WS_PATHS, envelope, parseCommand, parseResendDuration, subscriptionKey, type Command } from './protocol';
import type { ConnectionCap } from '@chainpipe/redis';
import type { ResendStore } from './resend-store';
import { Subscriptions } from './subscriptions';

export interface WsHubOptions {
  maxConnectionsPerKey: number;
  /** A client whose unsent backlog passes this is disconnected (it never slows the others). */
  maxBufferedBytes: number;
  pingIntervalMs: number;
  defaultResendSeconds: number;
  retentionSeconds: number;
  maxMessageBytes: number;
}

export interface WsHubDeps {
  resolveKey: (token: string) => Promise<Principal | undefined>;
  store: ResendStore;
  /** Open connections per API key across every copy (`maxConnectionsPerKey`). */
  cap: Pick<ConnectionCap, 'acquire' | 'release' | 'renew'>;
  /** The application's `ws_ack_resend_interval_seconds`: an unacknowledged push is sent again this long after the last send. */
  resendIntervalSeconds: (appId: string) => Promise<number>;
  /** The V2 record of a stored transaction (getTxHash by chain and hash), undefined when unknown. */
  lookupTx: (chainType: string, chainId: number, hash: string) => Promise<unknown>;
  logger: Logger;
  registry: Registry;
  /** Time of the ping timer, of the resend checks and of every timestamp the hub writes. */
  clock?: Pick<Clock, 'now' | 'setInterval'>;
}

interface Connection extends WsPeer {
  appId: string;
  keyId: string;
  clientId: string;
  /** The pushes it wants (every address of the application until it subscribes or unsubscribes). */
  subs: Subscriptions;
  /** Settles once the resends after the handshake are written: commands are answered after them. */
  resent: Promise<void>;
  /** The client's resend window (X-ResendDuration), seconds. */
  resendSeconds: number;
  /** Message id → when this connection was last sent it: replays are not sent twice, resends are timed. */
  sent: Map<string, number>;
  /** A backlog of resends is being written at the client's pace: the periodic pass leaves it be. */
  backlog: boolean;
}

/**
 * Whether a connection is due to be sent an unacknowledged push again: it was sent it before,
 * `intervalMs` (the application's ack resend interval) or more ago, and the push is still
 * within the connection's resend window.
 */
export function resendIsDue(p: { now: number; lastSentAt: number | undefined; pushedAt: number; intervalMs: number; windowSeconds: number }): boolean {
  return p.lastSentAt !== undefined && p.now - p.lastSentAt >= p.intervalMs && p.pushedAt >= p.now - p.windowSeconds * 1000;
}

/** Message ids remembered per connection (the oldest are forgotten first). */
const SENT_IDS_PER_CONNECTION = 10_000;

/**
 * A stored push frame with its message id, push time, chain type and the addresses it matched
 * (undefined when the frame lacks them): a resend goes only to a connection that still wants it.
 */
interface StoredPush {
  frame: string;
  id: string | undefined;
  time: number | undefined;
  chainType: string | undefined;
  listenAddress: string[] | undefined;
}

const pushOf = (frame: string): StoredPush => {
  try {
    const { id, time, data } = JSON.parse(frame) as { id?: unknown; time?: unknown; data?: { chain_type?: unknown; listenAddress?: unknown } };
    const addrs = data?.listenAddress;
    return {
      frame,
      id: typeof id === 'string' ? id : undefined,
      time: typeof time === 'number' ? time : undefined,
      chainType: typeof data?.chain_type === 'string' ? data.chain_type : undefined,
      listenAddress: Array.isArray(addrs) && addrs.every((a) => typeof a === 'string') ? (addrs as string[]) : undefined,
    };
  } catch {
    return { frame, id: undefined, time: undefined, chainType: undefined, listenAddress: undefined };
  }
};

/** Whether the connection's subscriptions take the stored push (one that names no chain or addresses: sent as before). */
const subscribedTo = (subs: Subscriptions, p: StoredPush): boolean => p.chainType === undefined || p.listenAddress === undefined || subs.wants(p.chainType, p.listenAddress);

/** WebSocket close code of a connection whose missed pushes this copy cannot send (RFC 6455 1013, try again later): the client reconnects and gets its resend window. */
export const WS_CLOSE_GAP = 1013;

function hubMetrics(registry: Registry) {
  return {
    connections: new Gauge({ name: 'chainpipe_ws_connections', help: 'Open WebSocket connections', registers: [registry] }),
    handshakes: new Counter({ name: 'chainpipe_ws_handshakes_total', help: 'WebSocket handshakes by HTTP outcome', labelNames: ['status'], registers: [registry] }),
    sent: new Counter({ name: 'chainpipe_ws_pushes_sent_total', help: 'transaction frames written to connections, by reason (live, resend after a reconnect, periodic while unacknowledged, recovery after a fan-out gap)', labelNames: ['reason'], registers: [registry] }),
    gaps: new Counter({ name: 'chainpipe_ws_fanout_gaps_total', help: 'times this copy found it had missed fan-out stream entries (fell behind past the cap, or Redis lost the stream)', registers: [registry] }),
    deduplicated: new Counter({ name: 'chainpipe_ws_pushes_deduplicated_total', help: 'pushes not sent again to a connection that already had them (tx.push.v1 replayed to this copy)', registers: [registry] }),
    dropped: new Counter({ name: 'chainpipe_ws_disconnects_total', help: 'Connections closed by the server, by reason', labelNames: ['reason'], registers: [registry] }),
  };
}

/** Refuses a handshake with a plain HTTP answer in the endpoint's error envelope. */
const refuse = (socket: Duplex, status: number, msg: string) => refuseUpgrade(socket, status, { code: status, msg, data: null });

/**
 * The WebSocket side of tx-gateway: handshakes (key, resend window, per-key cap), client
 * commands, delivery of pushes to this copy's connections, keep-alive and slow-client cut-off.
 */
export class WsHub {
  private readonly wss: WebSocketServer;
  private readonly byApp = new Map<string, Set<Connection>>();
  private readonly conns: WsConnectionSet<Connection>;
  private readonly metrics: ReturnType<typeof hubMetrics>;
  private readonly log: Logger;
  private readonly clock: Pick<Clock, 'now' | 'setInterval'>;

  constructor(
    private readonly deps: WsHubDeps,
    private readonly opts: WsHubOptions,
  ) {
    this.wss = new WebSocketServer({ noServer: true, maxPayload: opts.maxMessageBytes, clientTracking: false });
    this.metrics = hubMetrics(deps.registry);
    this.log = deps.logger.child({ component: 'ws' });
    this.clock = deps.clock ?? systemClock;
    this.conns = new WsConnectionSet<Connection>({
      pingIntervalMs: opts.pingIntervalMs,
      maxBufferedBytes: opts.maxBufferedBytes,
      clock: this.clock,
      onRemove: (conn) => this.forget(conn),
      onCut: (conn, reason, buffered) => {
        this.metrics.dropped.inc({ reason });
        if (reason === 'slow') this.log.warn({ msg: 'ws_slow_client_disconnected', clientId: conn.clientId, appId: conn.appId, buffered });
      },
    });
    this.conns.start();
  }

  /** The upgrade handler of the push endpoints (for the HTTP server's upgrade routing). */
  readonly upgrade: UpgradeHandler = (req, socket, head) => {
    const path = (req.url ?? '/').split('?')[0];
    if (!(WS_PATHS as readonly string[]).includes(path)) return false;
    this.handshake(req, socket, head).catch((err) => {
      // Postgres (the key) or Redis (the per-key cap) away: 503, the client retries; anything else is ours.
      if (isDependencyUnavailable(err)) {
        this.log.warn({ msg: 'ws_handshake_unavailable', err: errorMessage(err) });
        this.metrics.handshakes.inc({ status: '503' });
        return refuseUpgrade(socket, 503, { code: 503, msg: 'service unavailable, retry later', data: null }, { 'Retry-After': '2' });
      }
      this.log.error({ msg: 'ws_handshake_failed', err: errorMessage(err) });
      this.metrics.handshakes.inc({ status: '500' });
      refuse(socket, 500, 'internal error');
    });
    return true;
  };

  private async handshake(req: http.IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const done = (status: number, msg: string) => {
      this.metrics.handshakes.inc({ status: String(status) });
      refuse(socket, status, msg);
    };
    // a copy shutting down takes no new connection: the client goes to another copy
    if (this.closing) return done(503, 'server shutting down');
    const token = req.headers['x-api-key'];
    if (typeof token !== 'string' || token === '') return done(400, 'missing X-API-Key');
    const principal = await this.deps.resolveKey(token);
    if (!principal) return done(403, 'invalid API key');
    const header = req.headers['x-resendduration'];
    const resend = parseResendDuration(typeof header === 'string' ? header : undefined, this.opts.defaultResendSeconds, this.opts.retentionSeconds);
    if (!resend.ok) return done(400, resend.error);
    // Counted (across copies) before the upgrade completes, so parallel handshakes cannot pass
    // the cap together; released again if the upgrade itself fails (a malformed request).
    const clientId = randomUUID();
    if (!(await this.deps.cap.acquire(principal.keyId, clientId))) return done(429, `at most ${this.opts.maxConnectionsPerKey} connections per API key`);
    let upgraded = false;
    socket.once('close', () => {
      if (!upgraded) this.release(principal.keyId, clientId);
    });
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      upgraded = true;
      this.metrics.handshakes.inc({ status: '101' });
      this.open(ws, principal, clientId, resend.seconds);
    });
  }

  private open(ws: WebSocket, principal: Principal, clientId: string, resendSeconds: number): void {
    const conn: Connection = { ws, appId: principal.appId, keyId: principal.keyId, clientId, subs: new Subscriptions(), resent: Promise.resolve(), resendSeconds, sent: new Map(), backlog: resendSeconds > 0 };
    let set = this.byApp.get(conn.appId);
    if (!set) this.byApp.set(conn.appId, (set = new Set()));
    set.add(conn);
    this.conns.add(conn);
    this.metrics.connections.inc();
    ws.on('message', (data, isBinary) => {
      const text = isBinary ? '' : Buffer.isBuffer(data) ? data.toString('utf8') : Buffer.concat(data as Buffer[]).toString('utf8');
      void conn.resent.then(() => this.command(conn, text)).catch((err) => this.log.warn({ msg: 'ws_command_failed', clientId: conn.clientId, err: errorMessage(err) }));
    });
    this.send(conn, JSON.stringify(envelope('connected', randomUUID(), 0, { clientId: conn.clientId, appId: conn.appId }, 'success', this.clock.now())));
    // What the application did not acknowledge within the client's window, oldest first.
    if (resendSeconds > 0) {
      conn.resent = this.deps.store
        .unackedSince(conn.appId, this.clock.now() - resendSeconds * 1000)
        // Already written live: the fan-out can deliver a push while its resend is read or paced.
        .then((frames) => this.sendBacklog(conn, frames.map(pushOf), 'resend', (id) => !conn.sent.has(id)))
        .catch((err) => this.log.warn({ msg: 'ws_resend_failed', appId: conn.appId, err: errorMessage(err) }))
        // The connection counts as writing its backlog from the handshake on (`backlog` above),
        // so a periodic pass never starts a second one while the store is still being read.
        .finally(() => (conn.backlog = false));
    }
  }

  /**
   * Sends pushes again to one connection at the pace it reads (`WsConnectionSet.roomForBacklog`):
   * a backlog of an hour of unacknowledged pushes reaches a client that reads instead of tripping
   * the slow-client rule by its size. `stillWanted` is asked just before each frame, since live
   * pushes and acknowledgements go on while the backlog is paced. One backlog per connection at a
   * time (`conn.backlog`).
   */
  private async sendBacklog(conn: Connection, pushes: readonly StoredPush[], reason: 'resend' | 'periodic' | 'recovery', stillWanted: (messageId: string) => boolean): Promise<void> {
    conn.backlog = true;
    // Subscriptions are asked at send time too: an `unsubscribe` during a paced backlog holds from then on.
    const wanted = (p: StoredPush): p is StoredPush & { id: string } => p.id !== undefined && stillWanted(p.id) && subscribedTo(conn.subs, p);
    try {
      for (const p of pushes) {
        if (!wanted(p)) continue;
        if (!(await this.conns.roomForBacklog(conn))) return;
        if (!wanted(p)) continue;
        if (this.sendPush(conn, p.frame, p.id)) this.metrics.sent.inc({ reason });
      }
    } finally {
      conn.backlog = false;
    }
  }

  private forget(conn: Connection): void {
    const set = this.byApp.get(conn.appId);
    if (!set?.delete(conn)) return;
    if (set.size === 0) this.byApp.delete(conn.appId);
    this.release(conn.keyId, conn.clientId);
    this.metrics.connections.dec();
  }

  private release(keyId: string, clientId: string): void {
    this.deps.cap.release(keyId, clientId).catch((err) => this.log.warn({ msg: 'ws_cap_release_failed', err: errorMessage(err) }));
  }

  /** Renews the cap's leases of this copy's open connections; the service runs it as a periodic job. */
  async renewLeases(): Promise<void> {
    await this.deps.cap.renew([...this.conns].map((c) => ({ keyId: c.keyId, connectionId: c.clientId })));
  }

  /** Writes a frame unless the client is too far behind, in which case it is cut off. */
  private send(conn: Connection, frame: string): boolean {
    return this.conns.send(conn, frame);
  }

  /** Sends a push and remembers when, by its message id. */
  private sendPush(conn: Connection, frame: string, messageId: string | undefined): boolean {
    if (!this.send(conn, frame)) return false;
    if (messageId !== undefined) {
      conn.sent.delete(messageId);
      conn.sent.set(messageId, this.clock.now());
      if (conn.sent.size > SENT_IDS_PER_CONNECTION) conn.sent.delete(conn.sent.keys().next().value as string);
    }
    return true;
  }

  private reply(conn: Connection, id: string, r: Pick<WsTxServerReply, 'type' | 'code' | 'data' | 'msg'>): void {
    this.send(conn, JSON.stringify(envelope(r.type, id, r.code, r.data, r.msg, this.clock.now())));
  }

  private async command(conn: Connection, text: string): Promise<void> {
    const { id, command } = parseCommand(text);
    const c: Command = command;
    switch (c.kind) {
      case 'reply':
        return this.reply(conn, id, c.reply);
      case 'subscribe':
        conn.subs.subscribe(subscriptionKey(c.chainType, c.address));
        return this.reply(conn, id, { type: 'subscribe', code: 0, data: { 'API Key': conn.keyId, address: c.address, chain_type: c.chainType }, msg: 'success' });
      case 'unsubscribe':
        conn.subs.unsubscribe(c.keys);
        return this.reply(conn, id, { type: 'unsubscribe', code: 0, data: { address: c.address, chainType: c.chainType }, msg: 'success' });
      case 'ack':
        if (c.txKey) await this.deps.store.ack(conn.appId, c.txKey, this.clock.now());
        return;
      case 'getTxHash': {
        let data: unknown;
        if (c.messageId) {
          const frame = await this.deps.store.frame(conn.appId, c.messageId);
          if (frame) data = (JSON.parse(frame) as { data: unknown }).data;
        }
        if (data === undefined && c.hash) data = await this.deps.lookupTx(c.chainType, c.chainId, c.hash);
        if (data === undefined) return this.reply(conn, id, { type: 'getTxHash', code: 404, data: null, msg: 'transaction not found' });
        return this.reply(conn, id, { type: 'getTxHash', code: 0, data, msg: 'success' });
      }
    }
  }

  /**
   * Sends a push to this copy's connections of the application that want it. A push this
   * connection was already sent (the same message id: tx.push.v1 replayed to this copy after a
   * restart or a rebalance) is not sent again; the periodic resend decides when it is due.
   */
  deliver(appId: string, frame: string, chainType: string, listenAddress: readonly string[], messageId: string): number {
    const set = this.byApp.get(appId);
    if (!set) return 0;
    let n = 0;
    for (const conn of [...set]) {
      if (!conn.subs.wants(chainType, listenAddress)) continue;
      if (conn.sent.has(messageId)) {
        this.metrics.deduplicated.inc();
        continue;
      }
      if (this.sendPush(conn, frame, messageId)) n += 1;
    }
    this.metrics.sent.inc({ reason: 'live' }, n);
    return n;
  }

  /**
   * Sends again, to each connection that was sent it, every push its application has not
   * acknowledged once `ws_ack_resend_interval_seconds` passed since that connection's last send,
   * within the connection's resend window. What was never sent to a connection (filtered by its
   * subscriptions) is not sent by this either. One pass; the service runs it as a periodic job.
   */
  async resendDue(): Promise<void> {
    for (const [appId, set] of [...this.byApp]) {
      // A connection still writing a backlog at its pace gets this pass's due pushes next pass.
      const conns = [...set].filter((c) => c.resendSeconds > 0 && c.sent.size > 0 && !c.backlog);
      if (!conns.length) continue;
      const intervalMs = (await this.deps.resendIntervalSeconds(appId)) * 1000;
      const now = this.clock.now();
      const widest = Math.max(...conns.map((c) => c.resendSeconds));
      const pushes = (await this.deps.store.unackedSince(appId, now - widest * 1000)).map(pushOf);
      for (const conn of conns) {
        const due = pushes.filter((p) => p.id !== undefined && resendIsDue({ now, lastSentAt: conn.sent.get(p.id), pushedAt: p.time ?? now, intervalMs, windowSeconds: conn.resendSeconds }));
        if (!due.length) continue;
        // Not awaited: one connection's pace never holds back the others' resends. Due is asked
        // again at send time with the same `now`, so a push sent live meanwhile is not repeated.
        void this.sendBacklog(conn, due, 'periodic', (id) => {
          const last = conn.sent.get(id);
          return last === undefined || now - last >= intervalMs;
        }).catch((err) => this.log.warn({ msg: 'ws_resend_failed', appId, err: errorMessage(err) }));
      }
    }
  }

  /**
   * The fan-out reader missed entries (FanoutReader `onGap`): which applications they were for is
   * unknown, so every connection of this copy is made whole the way a reconnect would. One with
   * a resend window gets the store's unacknowledged pushes of that window it was not sent (and
   * wants), at its pace; one without a window, or when the store cannot be read, is closed with
   * 1013 (try again later) so the client reconnects and gets its resend window. Never a silent gap.
   */
  recoverGap(): void {
    this.metrics.gaps.inc();
    const now = this.clock.now();
    for (const conn of this.conns) {
      if (conn.resendSeconds <= 0) {
        this.closeForGap(conn);
        continue;
      }
      void this.deps.store
        .unackedSince(conn.appId, now - conn.resendSeconds * 1000)
        .then((frames) => this.sendBacklog(conn, frames.map(pushOf), 'recovery', (id) => !conn.sent.has(id)))
        .catch((err) => {
          this.log.warn({ msg: 'ws_gap_recovery_failed', appId: conn.appId, err: errorMessage(err) });
          this.closeForGap(conn);
        });
    }
  }

  private closeForGap(conn: Connection): void {
    this.metrics.dropped.inc({ reason: 'fanout_gap' });
    conn.ws.close(WS_CLOSE_GAP, 'missed pushes: reconnect for the resend window');
  }

  get connectionCount(): number {
    return this.conns.size;
  }

  private closing = false;

  /** Closes every connection with 1001 (going away): clients reconnect to another copy; new handshakes get 503 from now on. */
  async close(): Promise<void> {
    this.closing = true;
    await this.conns.closeAll(2_000);
  }
}
