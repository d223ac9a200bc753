import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { KLINE_WS_PATH, type WsKlineServerMessage } from '@chainpipe/contracts';
import { refuseUpgrade, type Principal, type UpgradeHandler, type WsConnectionSet, type WsPeer } from '@chainpipe/http';
import { envelope, WS_CODE } from '@chainpipe/kline';
import { errorMessage, type Clock, type Logger } from '@chainpipe/runtime';
import type { KlineConnectionCap } from './deps';
import { KLINE_PREFIX, klineEnvelope } from './envelope';
import type { KlineHub } from './ws-hub';

export { KLINE_WS_PATH };
export const TOPIC_WS_PATTERN = new RegExp(`^${KLINE_PREFIX}/ws/([^/]+)$`);

/**
 * `Retry-After` of an upgrade refused by the per-key connection cap: a slot comes back when one of
 * the key's connections closes, which no clock tells; a few seconds keep a reconnecting client
 * from hammering the gateway meanwhile.
 */
export const CONNECTION_CAP_RETRY_AFTER_SECONDS = 5;

/** The subprotocol a browser offers with its key (`x-api-key.<key>`); the server selects `kline.v1`. */
export const KEY_SUBPROTOCOL_PREFIX = 'x-api-key.';
export const KLINE_SUBPROTOCOL = 'kline.v1';

/**
 * The key of a handshake: the `X-API-Key` header (spec), else the subprotocol `x-api-key.<key>`,
 * because a browser's WebSocket cannot send headers. A subprotocol keeps the key out of the URL
 * (and so out of access logs and proxies' logs), where a query parameter would put it.
 */
export function handshakeKey(req: IncomingMessage): string | undefined {
  const header = req.headers['x-api-key'];
  if (typeof header === 'string' && header) return header;
  const offered = String(req.headers['sec-websocket-protocol'] ?? '').split(',');
  const key = offered.map((p) => p.trim()).find((p) => p.startsWith(KEY_SUBPROTOCOL_PREFIX));
  return key ? key.slice(KEY_SUBPROTOCOL_PREFIX.length) || undefined : undefined;
}

/**
 * The subprotocol the server answers: `kline.v1` when offered, else the first offered one that
 * does not carry a key (the `ws` default is the first offered), else none. The key is never echoed.
 */
export function selectSubprotocol(offered: Set<string>): string | false {
  if (offered.has(KLINE_SUBPROTOCOL)) return KLINE_SUBPROTOCOL;
  return [...offered].find((p) => !p.startsWith(KEY_SUBPROTOCOL_PREFIX)) ?? false;
}

/**
 * Upgrades of the candlestick WebSockets: `/kline/api/v1/kline/ws` (the hub) and
 * `/kline/api/v1/ws/{topic}` (application ping only). Both need `X-API-Key` (or, from a browser,
 * the key subprotocol): missing → 401, unknown → 403, with the spec's `Unauthorized` error body.
 * With a `connectionCap`, a key's open connections of both kinds, on every gateway copy, are at
 * most its `maxPerKey`: one more is refused with 429, `Retry-After` and the spec's 99001 body
 * (D182). `upgrade` returns false for other paths; `renewLeases` keeps this copy's slots.
 */
export function klineUpgrade(deps: {
  hub: KlineHub;
  /** The topic sockets' set (keep-alive, bounded sends, an error listener, closed on shutdown), as the hub has its own. */
  topicSockets: WsConnectionSet<WsPeer>;
  resolveKey: (token: string) => Promise<Principal | undefined>;
  logger: Logger;
  clock: Pick<Clock, 'now'>;
  connectionCap?: KlineConnectionCap;
}): { upgrade: UpgradeHandler; renewLeases(): Promise<void> } {
  const wss = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024, handleProtocols: selectSubprotocol });
  const unauthorized = (status: number) => klineEnvelope.error(status, status, 'Unauthorized');

  const topicSocket = (ws: WebSocket) => {
    const peer: WsPeer = { ws };
    deps.topicSockets.add(peer);
    ws.on('message', (data, isBinary) => {
      const send = (type: WsKlineServerMessage['type'], body: unknown, opts: { id?: string; code?: number; msg?: string }) => deps.topicSockets.send(peer, JSON.stringify(envelope(type, body, { ...opts, now: deps.clock.now() })));
      if (isBinary) return send('error', null, { code: WS_CODE.invalidMessage, msg: 'Binary messages are not supported' });
      let m: any;
      try {
        m = JSON.parse(data.toString());
      } catch {
        return send('error', null, { code: WS_CODE.invalidMessage, msg: 'Invalid JSON' });
      }
      const id = typeof m?.id === 'string' ? m.id : '';
      if (m?.type === 'ping') return send('pong', {}, { id });
      if (typeof m?.type !== 'string' || !m.type) return send('error', null, { id, code: WS_CODE.invalidMessage, msg: 'Missing id or type' });
      send('error', null, { id, code: WS_CODE.unknownCommand, msg: `Unknown command: ${m.type}` });
    });
  };

  const upgrade: UpgradeHandler = (req, socket, head) => {
    const path = new URL(req.url ?? '/', 'http://gateway').pathname;
    const isHub = path === KLINE_WS_PATH;
    if (!isHub && !TOPIC_WS_PATTERN.test(path)) return false;
    const key = handshakeKey(req);
    if (!key) {
      refuseUpgrade(socket, 401, unauthorized(401));
      return true;
    }
    deps
      .resolveKey(key)
      .then(async (principal) => {
        if (!principal) return refuseUpgrade(socket, 403, unauthorized(403));
        if (!(await admitted(principal.keyId, path, socket))) return;
        wss.handleUpgrade(req, socket, head, (ws) => (isHub ? deps.hub.add(ws) : topicSocket(ws)));
      })
      .catch((err) => {
        deps.logger.warn({ msg: 'ws_auth_failed', err: errorMessage(err) });
        refuseUpgrade(socket, 500, klineEnvelope.error(500, 500, 'Internal server error'));
      });
    return true;
  };

  /** This copy's slots of the cap: lease id → key id, from before the upgrade until the socket closes. */
  const leases = new Map<string, string>();
  /**
   * Takes a slot of the key's cap for this socket (before the upgrade, so parallel handshakes
   * cannot pass the cap together), given back when the socket closes, upgraded or not; false
   * when the key has every slot (the upgrade is then refused). While Redis fails the connection
   * is let in without a slot and counted as a fallback: candles reach clients without Redis.
   */
  const admitted = async (keyId: string, path: string, socket: Duplex): Promise<boolean> => {
    const limit = deps.connectionCap;
    if (!limit) return true;
    const route = path === KLINE_WS_PATH ? KLINE_WS_PATH : `${KLINE_PREFIX}/ws/{topic}`;
    const lease = randomUUID();
    let acquired: boolean;
    try {
      acquired = await limit.cap.acquire(keyId, lease);
    } catch (err) {
      deps.logger.warn({ msg: 'ws_cap_unavailable', err: errorMessage(err) });
      limit.limits.storeFailed('kline_ws_connections', 'key');
      return true;
    }
    if (!acquired) {
      limit.limits.refused(route, 'key');
      // The envelope answers 429 with the spec's 99001 body (its own message).
      refuseUpgrade(socket, 429, klineEnvelope.error(429, 429, 'too many connections'), { 'Retry-After': String(CONNECTION_CAP_RETRY_AFTER_SECONDS) });
      return false;
    }
    leases.set(lease, keyId);
    const release = () => {
      leases.delete(lease);
      limit.cap.release(keyId, lease).catch((err) => deps.logger.warn({ msg: 'ws_cap_release_failed', err: errorMessage(err) }));
    };
    // The client may have gone while the slot was taken: give it back at once.
    if (socket.destroyed) {
      release();
      return false;
    }
    socket.once('close', release);
    return true;
  };

  return {
    upgrade,
    renewLeases: async () => {
      if (!deps.connectionCap || leases.size === 0) return;
      await deps.connectionCap.cap.renew([...leases].map(([connectionId, keyId]) => ({ keyId, connectionId })));
    },
  };
}
