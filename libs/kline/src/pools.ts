import type { HttpKlinePool } from '@chainpipe/contracts';
import { normalizeChainType as standardChainType } from '@chainpipe/chains';

export type TokenSide = 'base' | 'quote';

export function isTokenSide(v: unknown): v is TokenSide {
  return v === 'base' || v === 'quote';
}

/** A registered pool as the service returns it: the schema's pool record (`http/kline/pool`). */
export type PoolRecord = HttpKlinePool & { dex_id: string | null; label: string | null };

/**
 * The candlestick service's `chain_type`: a standard type or one of its aliases becomes the
 * standard type (`eth` → `evm` …, the table the price service uses); any other non-blank name is
 * kept, lowercased.
 */
export function normalizeChainType(v: unknown): string | undefined {
  if (typeof v !== 'string' || !v.trim()) return undefined;
  return standardChainType(v) ?? v.trim().toLowerCase();
}

/**
 * The pool key of the WebSocket protocol and the debug endpoints is the Kafka key of the pool's
 * ticks and candles (defined with the topics: TOPICS.marketTicks.key).
 */
export { poolKey } from '@chainpipe/contracts';

/** The upstream's lookup form of a pool: `network_id:pool_address`. */
export function upstreamPoolId(networkId: string, poolAddress: string): string {
  return `${networkId}:${poolAddress}`;
}

export interface Pagination {
  page: number;
  pageSize: number;
  total: number;
  totalPages: number;
}

export function pagination(page: number, pageSize: number, total: number): Pagination {
  return { page, pageSize, total, totalPages: Math.ceil(total / pageSize) };
}
