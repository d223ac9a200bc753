import type { IncomingMessage } from 'node:http';
import { WebSocketServer, type WebSocket } from 'ws';
import { KLINE_WS_PATH, type WsKlineServerMessage } from '@chainpipe/contracts';
import { refuseUpgrade, type Principal, type UpgradeHandler, type WsConnectionSet, type WsPeer } from '@chainpipe/http';
import { envelope, WS_CODE } from '@chainpipe/kline';
import { errorMessage, type Clock, type Logger } from '@chainpipe/runtime';
import { KLINE_PREFIX, klineEnvelope } from './envelope';
import type { KlineHub } from './ws-hub';

export { KLINE_WS_PATH };
export const TOPIC_WS_PATTERN = new RegExp(`^${KLINE_PREFIX}/ws/([^/]+)$`);

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
 * Returns false for other paths.
 */
export function klineUpgrade(deps: {
  hub: KlineHub;
  /** The topic sockets' set (keep-alive, bounded sends, an error listener, closed on shutdown), as the hub has its own. */
  topicSockets: WsConnectionSet<WsPeer>;
  resolveKey: (token: string) => Promise<Principal | undefined>;
  logger: Logger;
  clock: Pick<Clock, 'now'>;
}) {
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
      .then((principal) => {
        if (!principal) return refuseUpgrade(socket, 403, unauthorized(403));
        wss.handleUpgrade(req, socket, head, (ws) => (isHub ? deps.hub.add(ws) : topicSocket(ws)));
      })
      .catch((err) => {
        deps.logger.warn({ msg: 'ws_auth_failed', err: errorMessage(err) });
        refuseUpgrade(socket, 500, klineEnvelope.error(500, 500, 'Internal server error'));
      });
    return true;
  };
  return upgrade;
}
