import type { HttpKlineOhlcvQuery } from '@chainpipe/contracts';
import { isInterval, type Interval } from './intervals';
import { normalizeChainType } from './pools';

/** Values above this are Unix milliseconds; at or below, seconds (the spec's rule). */
export const MILLIS_THRESHOLD = 10_000_000_000;
export const OHLCV_DEFAULT_LIMIT = 1000;
export const OHLCV_MAX_LIMIT = 5000;

export interface OhlcvQuery {
  interval: Interval;
  from: number;
  to: number;
  limit: number;
  chain_type: string;
  chain_id: number;
  pool_address: string;
}

/** Unix seconds of a `from`/`to` value given in seconds or milliseconds. */
export function toUnixSeconds(value: number): number {
  return value > MILLIS_THRESHOLD ? Math.floor(value / 1000) : value;
}

/**
 * The query after its schema (`http/kline/ohlcv-query`) accepted the strings: numbers parsed,
 * milliseconds turned into seconds, chain type normalized. `token` is accepted and ignored: the
 * pool is found by its address.
 */
export function normalizeOhlcvQuery(q: HttpKlineOhlcvQuery): OhlcvQuery {
  if (!isInterval(q.interval)) throw new Error('interval must be validated first');
  return {
    interval: q.interval,
    from: toUnixSeconds(Number(q.from)),
    to: toUnixSeconds(Number(q.to)),
    limit: q.limit === undefined || q.limit === '' ? OHLCV_DEFAULT_LIMIT : Number(q.limit),
    chain_type: normalizeChainType(q.chain_type)!,
    chain_id: Number(q.chain_id),
    pool_address: q.pool_address.trim(),
  };
}
