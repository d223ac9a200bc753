import type { WsKlineServerMessage } from '@chainpipe/contracts';
import { isInterval, sortIntervals, INTERVALS, type Interval } from './intervals';
import { normalizeChainType, type TokenSide } from './pools';

/**
 * The candlestick WebSocket protocol (market-data spec): JSON text frames in one envelope both
 * ways. Parsing a client frame gives a command or the exact error the spec names; nothing here
 * touches a socket.
 */
export const WS_CODE = { ok: 0, invalidMessage: 4001, unknownCommand: 4002, internal: 4500 } as const;

/** `{ id, time, type, code, data, msg }` (`ws/kline/server-message`). */
export type WsEnvelope = WsKlineServerMessage;

export interface PoolRef {
  chain_type: string;
  chain_id: number;
  pool_address: string;
}

export type ClientCommand =
  | { type: 'ping'; id: string }
  | { type: 'subscribe'; id: string; pool: PoolRef; token?: TokenSide; intervals: Interval[] }
  | { type: 'unsubscribe'; id: string; pool: PoolRef };

export interface ProtocolError {
  error: { id: string; code: number; msg: string };
}

export function envelope(type: WsKlineServerMessage['type'], data: unknown, opts: { id?: string; code?: number; msg?: string; now: number }): WsEnvelope {
  return { id: opts.id ?? '', time: opts.now, type, code: opts.code ?? WS_CODE.ok, data, msg: opts.msg ?? 'ok' };
}

const fail = (id: string, code: number, msg: string): ProtocolError => ({ error: { id, code, msg } });

function poolRef(data: unknown): PoolRef | undefined {
  if (!data || typeof data !== 'object' || Array.isArray(data)) return undefined;
  const d = data as Record<string, unknown>;
  const chainType = normalizeChainType(d.chain_type);
  const chainId = typeof d.chain_id === 'number' ? d.chain_id : typeof d.chain_id === 'string' && /^\d+$/.test(d.chain_id.trim()) ? Number(d.chain_id) : NaN;
  const address = typeof d.pool_address === 'string' ? d.pool_address.trim() : '';
  if (!chainType || !Number.isSafeInteger(chainId) || chainId <= 0 || !address) return undefined;
  return { chain_type: chainType, chain_id: chainId, pool_address: address };
}

/**
 * `intervals` must be a JSON array; unknown values in it are dropped, and a missing or empty
 * list means every interval. Anything else (a comma-separated string) is a bad request.
 */
function parseIntervals(v: unknown): Interval[] | undefined {
  if (v === undefined || v === null) return [...INTERVALS];
  if (!Array.isArray(v)) return undefined;
  // Ignored values are as if absent: a list left empty means every interval, as an empty one does.
  const valid = sortIntervals(v.filter(isInterval));
  return valid.length ? valid : [...INTERVALS];
}

/** Parses one text frame from a client. */
export function parseClientMessage(text: string): ClientCommand | ProtocolError {
  let msg: unknown;
  try {
    msg = JSON.parse(text);
  } catch {
    return fail('', WS_CODE.invalidMessage, 'Invalid JSON');
  }
  if (!msg || typeof msg !== 'object' || Array.isArray(msg)) return fail('', WS_CODE.invalidMessage, 'Missing id or type');
  const m = msg as Record<string, unknown>;
  const id = typeof m.id === 'string' ? m.id : '';
  if (typeof m.id !== 'string' || !m.id || typeof m.type !== 'string' || !m.type) return fail(id, WS_CODE.invalidMessage, 'Missing id or type');
  switch (m.type) {
    case 'ping':
      return { type: 'ping', id };
    case 'subscribe': {
      const pool = poolRef(m.data);
      const data = (m.data ?? {}) as Record<string, unknown>;
      const intervals = pool ? parseIntervals(data.intervals) : undefined;
      if (!pool || !intervals) return fail(id, WS_CODE.invalidMessage, 'subscribe: missing required fields');
      const token = data.token === 'base' || data.token === 'quote' ? data.token : undefined;
      return { type: 'subscribe', id, pool, token, intervals };
    }
    case 'unsubscribe': {
      const pool = poolRef(m.data);
      if (!pool) return fail(id, WS_CODE.invalidMessage, 'unsubscribe: missing required fields');
      return { type: 'unsubscribe', id, pool };
    }
    default:
      return fail(id, WS_CODE.unknownCommand, `Unknown command: ${m.type}`);
  }
}
