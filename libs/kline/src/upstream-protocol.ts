import { isTokenSide, type TokenSide } from './pools';

/**
 * The CoinGecko WebSocket API's `OnchainOHLCV` channel (channel code G3), as documented:
 * connect to `wss://stream.coingecko.com/v1` with the key (`x_cg_pro_api_key` query parameter or
 * `x-cg-pro-api-key` header); the server greets (`{code: 3000, message: "Connection established"}`,
 * then `{type: "welcome"}`); the client subscribes ActionCable-style to the channel and waits
 * for `confirm_subscription`; then `message` commands whose `data` is a JSON string
 * `{"network_id:pool_addresses": [...], interval, token, action: "set_pools" | "unset_pools"}`
 * add and drop pools (answered `{code: 2000, message}`); updates arrive as flat objects with the
 * short keys `ch n pa to i o h l c v t`. Each (pool, interval, token) counts as one subscription
 * against the per-socket limit. Shared by the ingester (client) and the simulator (server).
 */
export const OHLCV_CHANNEL = 'OnchainOHLCV';
export const OHLCV_CHANNEL_CODE = 'G3';
export const OHLCV_IDENTIFIER = JSON.stringify({ channel: OHLCV_CHANNEL });
export const UPSTREAM_INTERVALS = ['1s', '1m', '5m', '15m', '1h', '2h', '4h', '8h', '12h', '1d'] as const;
export const UPSTREAM_CODE = { connected: 3000, ok: 2000 } as const;
export const API_KEY_QUERY = 'x_cg_pro_api_key';
export const API_KEY_HEADER = 'x-cg-pro-api-key';

/** One OnchainOHLCV update as the upstream sends it. Any number may be null. */
export interface UpstreamOhlcv {
  ch: string;
  n: string;
  pa: string;
  to: string;
  i: string;
  o: number | null;
  h: number | null;
  l: number | null;
  c: number | null;
  v: number | null;
  t: number;
}

export interface PoolsCommandData {
  'network_id:pool_addresses': string[];
  interval: string;
  token: TokenSide;
  action: 'set_pools' | 'unset_pools';
}

export const subscribeCommand = () => ({ command: 'subscribe', identifier: OHLCV_IDENTIFIER });
export const unsubscribeCommand = () => ({ command: 'unsubscribe', identifier: OHLCV_IDENTIFIER });

export function poolsCommand(action: PoolsCommandData['action'], pools: string[], interval: string, token: TokenSide) {
  const data: PoolsCommandData = { 'network_id:pool_addresses': pools, interval, token, action };
  return { command: 'message', identifier: OHLCV_IDENTIFIER, data: JSON.stringify(data) };
}

export type ServerMessage =
  | { kind: 'connected'; sid: string | null }
  | { kind: 'welcome'; sid: string | null }
  | { kind: 'confirm' }
  | { kind: 'reject' }
  | { kind: 'ping' }
  | { kind: 'ack'; message: string }
  | { kind: 'error'; code: number; message: string }
  | { kind: 'ohlcv'; update: UpstreamOhlcv }
  | { kind: 'unknown' };

const num = (v: unknown): number | null | undefined => (v === null ? null : typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/** Narrows an update; undefined when a key is missing or has the wrong type. */
export function parseOhlcvUpdate(m: Record<string, unknown>): UpstreamOhlcv | undefined {
  const prices = ['o', 'h', 'l', 'c', 'v'].map((k) => num(m[k]));
  if (prices.some((p) => p === undefined)) return undefined;
  if (typeof m.n !== 'string' || !m.n || typeof m.pa !== 'string' || !m.pa || typeof m.i !== 'string' || !isTokenSide(m.to)) return undefined;
  if (typeof m.t !== 'number' || !Number.isSafeInteger(m.t) || m.t < 0) return undefined;
  const [o, h, l, c, v] = prices as (number | null)[];
  return { ch: String(m.ch), n: m.n, pa: m.pa, to: m.to, i: m.i, o, h, l, c, v, t: m.t };
}

/** Classifies one text frame from the upstream. */
export function parseServerMessage(text: string): ServerMessage {
  let m: any;
  try {
    m = JSON.parse(text);
  } catch {
    return { kind: 'unknown' };
  }
  if (!m || typeof m !== 'object' || Array.isArray(m)) return { kind: 'unknown' };
  if (m.ch === OHLCV_CHANNEL_CODE || ('pa' in m && 't' in m)) {
    const update = parseOhlcvUpdate(m);
    return update ? { kind: 'ohlcv', update } : { kind: 'unknown' };
  }
  switch (m.type) {
    case 'welcome':
      return { kind: 'welcome', sid: typeof m.sid === 'string' ? m.sid : null };
    case 'confirm_subscription':
      return { kind: 'confirm' };
    case 'reject_subscription':
      return { kind: 'reject' };
    case 'ping':
      return { kind: 'ping' };
    default:
      break;
  }
  if (typeof m.code === 'number') {
    if (m.code === UPSTREAM_CODE.connected) return { kind: 'connected', sid: typeof m.uuid === 'string' ? m.uuid : null };
    if (m.code === UPSTREAM_CODE.ok) return { kind: 'ack', message: String(m.message ?? '') };
    return { kind: 'error', code: m.code, message: String(m.message ?? '') };
  }
  return { kind: 'unknown' };
}

/**
 * CoinGecko's on-chain REST OHLCV (`/onchain/networks/{network}/pools/{address}/ohlcv/{timeframe}`,
 * the same answer GeckoTerminal gives): `data.attributes.ohlcv_list` of `[time (Unix s), open,
 * high, low, close, volume]`, newest first. Timeframes `day` (aggregate 1), `hour` (1, 4, 12),
 * `minute` (1, 5, 15): the finest is the minute. At most 1000 candles an answer.
 */
export const REST_OHLCV_MAX_LIMIT = 1000;

/** One candle of a REST OHLCV answer. */
export interface RestOhlcv {
  t: number;
  o: number | null;
  h: number | null;
  l: number | null;
  c: number | null;
  v: number | null;
}

/** The candles of a REST OHLCV answer, oldest first; rows of the wrong shape are skipped. */
export function parseOhlcvList(body: unknown): RestOhlcv[] {
  const list = (body as { data?: { attributes?: { ohlcv_list?: unknown } } })?.data?.attributes?.ohlcv_list;
  if (!Array.isArray(list)) return [];
  const out: RestOhlcv[] = [];
  for (const row of list) {
    if (!Array.isArray(row) || row.length < 6 || typeof row[0] !== 'number' || !Number.isSafeInteger(row[0]) || row[0] < 0) continue;
    const [o, h, l, c, v] = row.slice(1, 6).map((x) => num(x));
    if ([o, h, l, c, v].some((x) => x === undefined)) continue;
    out.push({ t: row[0], o: o!, h: h!, l: l!, c: c!, v: v! });
  }
  return out.sort((a, b) => a.t - b.t);
}
