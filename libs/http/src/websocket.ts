import { STATUS_CODES, type IncomingMessage, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { WebSocket } from 'ws';
import { systemClock, type Clock, type Timer } from '@chainpipe/runtime';

/**
 * The WebSocket connection kit of the gateways and the simulator: refusals of
 * an upgrade as plain HTTP, upgrade routing on a server, and a connection set that owns
 * keep-alive, the slow-client rule, the pace of backlogs and the close of every connection on
 * shutdown.
 */

/**
 * Refuses an upgrade with a plain HTTP answer and closes the socket: the status line, and the
 * body as JSON when there is one (the endpoint's error envelope).
 */
export function refuseUpgrade(socket: Duplex, status: number, body?: unknown, headers: Record<string, string> = {}): void {
  const text = body === undefined ? '' : JSON.stringify(body);
  const lines = [`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
  if (body !== undefined) lines.push('Content-Type: application/json');
  lines.push(`Content-Length: ${Buffer.byteLength(text)}`, 'Connection: close');
  socket.end(`${lines.join('\r\n')}\r\n\r\n${text}`);
}

/** Takes over an upgrade (answers or upgrades it, possibly later) and returns true, or returns false: not its path. */
export type UpgradeHandler = (req: IncomingMessage, socket: Duplex, head: Buffer) => boolean;

/**
 * Routes the server's upgrade requests to `handlers`, the first that takes one; an upgrade none
 * takes is refused with 404. A socket error (the client went away mid-handshake) only destroys
 * that socket.
 */
export function routeUpgrades(server: Server, handlers: readonly UpgradeHandler[]): void {
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    if (handlers.some((h) => h(req, socket, head))) return;
    const path = (req.url ?? '/').split('?')[0].slice(0, 100);
    refuseUpgrade(socket, 404, { code: 404, msg: `no WebSocket endpoint at ${path}`, data: null });
  });
}

/** What the set needs of a connection: its socket. Apps extend it with their own state. */
export interface WsPeer {
  ws: WebSocket;
}

/** Why the server cut a connection off: it fell too far behind, or it missed a ping. */
export type WsCutReason = 'slow' | 'no_pong';

export interface WsConnectionSetOptions<C extends WsPeer> {
  /** Ping period; a connection that answered neither the previous ping nor sent anything since is cut off. */
  pingIntervalMs: number;
  /**
   * The slow-client rule: a frame that would take a connection's unsent backlog past this many
   * bytes is not queued and the connection is cut off at once (it never slows the others, and a
   * close frame would only queue behind the backlog).
   */
  maxBufferedBytes: number;
  /** Called once per connection when it leaves the set, whichever side closed it. */
  onRemove?: (conn: C) => void;
  /** Called when the server cut a connection off (before `onRemove`). */
  onCut?: (conn: C, reason: WsCutReason, bufferedBytes: number) => void;
  /** Time of the ping timer. */
  clock?: Pick<Clock, 'setInterval'>;
}

/**
 * The open connections of one endpoint, with keep-alive (a ping every `pingIntervalMs`, started
 * by `start`), bounded sends and a close of everything within a deadline.
 */
export class WsConnectionSet<C extends WsPeer> implements Iterable<C> {
  private readonly alive = new Map<C, boolean>();
  private timer?: Timer;

  constructor(private readonly opts: WsConnectionSetOptions<C>) {}

  /** Starts the keep-alive pings. */
  start(): void {
    this.timer ??= (this.opts.clock ?? systemClock).setInterval(() => this.keepAlive(), this.opts.pingIntervalMs).unref();
  }

  /** Adds an open connection; it leaves the set by itself when its socket closes. */
  add(conn: C): void {
    this.alive.set(conn, true);
    const seen = () => {
      if (this.alive.has(conn)) this.alive.set(conn, true);
    };
    conn.ws.on('pong', seen);
    conn.ws.on('message', seen);
    conn.ws.on('close', () => this.remove(conn));
    // An error is followed by 'close'; without a listener it would crash the process.
    conn.ws.on('error', () => undefined);
  }

  has(conn: C): boolean {
    return this.alive.has(conn);
  }

  get size(): number {
    return this.alive.size;
  }

  [Symbol.iterator](): Iterator<C> {
    return [...this.alive.keys()][Symbol.iterator]();
  }

  /** Takes a connection out of the set (once); true when it was in it. */
  remove(conn: C): boolean {
    if (!this.alive.delete(conn)) return false;
    this.opts.onRemove?.(conn);
    return true;
  }

  /** Writes a frame, or cuts the connection off when it would fall too far behind; false when not sent. */
  send(conn: C, frame: string | Buffer): boolean {
    const ws = conn.ws;
    if (ws.readyState !== ws.OPEN || !this.alive.has(conn)) return false;
    if (ws.bufferedAmount + frame.length > this.opts.maxBufferedBytes) {
      this.cut(conn, 'slow');
      return false;
    }
    ws.send(frame);
    return true;
  }

  /**
   * Waits until the connection has room for the next frame of a backlog (pushes sent again after
   * a reconnect, or while unacknowledged): its unsent bytes under a quarter of
   * `maxBufferedBytes`. A writer that asks before each frame sends a backlog of any size at the
   * pace the client reads, and leaves three quarters of the bound to live frames, which keep the
   * slow-client rule. A client that stops reading is cut off by keep-alive or by live frames,
   * which ends the wait. False once the connection is gone.
   */
  async roomForBacklog(conn: C): Promise<boolean> {
    const low = this.opts.maxBufferedBytes / 4;
    // On the wall clock: the socket flushes in real time.
    while (this.alive.has(conn) && conn.ws.readyState === conn.ws.OPEN && conn.ws.bufferedAmount > low) await new Promise((r) => setTimeout(r, 10));
    return this.alive.has(conn) && conn.ws.readyState === conn.ws.OPEN;
  }

  private cut(conn: C, reason: WsCutReason): void {
    const buffered = conn.ws.bufferedAmount;
    conn.ws.terminate();
    if (!this.alive.has(conn)) return;
    this.opts.onCut?.(conn, reason, buffered);
    this.remove(conn);
  }

  /** One keep-alive round: cuts off who stayed silent since the last one, pings the others. */
  keepAlive(): void {
    for (const [conn, alive] of [...this.alive]) {
      if (!alive) {
        this.cut(conn, 'no_pong');
        continue;
      }
      this.alive.set(conn, false);
      conn.ws.ping();
    }
  }

  /**
   * Stops the pings, closes every connection with 1001 (going away: clients reconnect to another
   * copy) and waits for their close handshakes up to `deadlineMs`; the rest are cut.
   */
  async closeAll(deadlineMs = 2_000): Promise<void> {
    this.timer?.cancel();
    this.timer = undefined;
    for (const conn of this) conn.ws.close(1001, 'server shutting down');
    // Waits on the sockets themselves (their close handshakes), so on the wall clock.
    const deadline = Date.now() + deadlineMs;
    while (this.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    for (const conn of this) {
      conn.ws.terminate();
      this.remove(conn);
    }
  }
}
