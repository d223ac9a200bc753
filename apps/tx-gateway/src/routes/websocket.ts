import type { ApiRoutes } from '@chainpipe/http';
import { WS_PATHS } from '../push/protocol';

/**
 * The WebSocket endpoints, declared for the API document. Upgrades are answered on the server
 * (push/ws-hub: key, resend window and per-key cap are checked there); a request that reaches
 * express did not ask for an upgrade and gets 426.
 */
export function websocketRoutes(api: ApiRoutes): void {
  for (const path of WS_PATHS) {
    api.route(
      {
        method: 'get',
        path,
        summary: 'WebSocket push of matched transactions (upgrade only)',
        description:
          'Handshake headers: `Upgrade: websocket`, `X-API-Key` (400 when missing, 403 when unknown), optional `X-ResendDuration` (seconds, default 180). Messages are described in docs/decisions.md#d84 (the handshake: #d83, resends: #d87) and `schemas/ws/tx/transaction-push.json`.',
        tags: ['push'],
        // The handshake checks the key itself: the spec gives a missing key 400 here, not 401.
        auth: 'none',
        ok: { status: 101, data: { type: 'null' }, description: 'switching protocols (WebSocket)', bare: true },
        errors: { 400: 'missing X-API-Key or a bad X-ResendDuration', 403: 'invalid API key', 426: 'no WebSocket upgrade requested', 429: 'too many connections for this key' },
      },
      (_req, res) => {
        res.status(426).set('Upgrade', 'websocket').json({ code: 426, msg: 'WebSocket upgrade required', data: null });
      },
    );
  }
}
