import type { Contracts, KlinePoolNotice } from '@chainpipe/contracts';
import type { Knex } from '@chainpipe/db';
import type { Principal, RateLimits, RouteRateLimit } from '@chainpipe/http';
import type { ConnectionCap, Redis } from '@chainpipe/redis';
import type { Clock, Logger } from '@chainpipe/runtime';
import type { Registry } from 'prom-client';

/** The upstream market-data REST API (CoinGecko Pro: https://pro-api.coingecko.com/api/v3). */
export interface MarketUpstream {
  baseUrl: string;
  apiKey: string;
  timeoutMs: number;
}

/**
 * The per-key cap of candlestick WebSocket connections (the hub's and the topic sockets'),
 * counted across every gateway copy by tx-gateway's `ConnectionCap` leases in Redis.
 */
export interface KlineConnectionCap {
  cap: Pick<ConnectionCap, 'acquire' | 'release' | 'renew'>;
  maxPerKey: number;
  /** Where refusals (and admissions while Redis failed) are counted. */
  limits: Pick<RateLimits, 'refused' | 'storeFailed'>;
}

/** What the candlestick routes and the WebSocket hub use. */
export interface KlineDeps {
  db: Knex;
  redis: Redis;
  contracts: Contracts;
  /** Publishes a pool notice to kline.pools.v1. */
  publishPoolNotice: (notice: KlinePoolNotice) => Promise<void>;
  logger: Logger;
  registry: Registry;
  resolveKey: (token: string) => Promise<Principal | undefined>;
  market: MarketUpstream;
  bodyLimitBytes: number;
  /** Time of the handlers and of the WebSocket keep-alive. */
  clock: Pick<Clock, 'now' | 'setInterval'>;
  ws: { pingMs: number; maxBufferedBytes: number };
  /** The debug routes answer on the ops listener only (KLINE_DEBUG_ON_OPS): 404 on the public port. */
  debugOnOps?: boolean;
  /** The debug `ensure` route's limit per client (`RateLimits.limit`); unlimited without. */
  ensureLimit?: RouteRateLimit;
  /** WebSocket connections per key across copies; uncapped without. */
  connectionCap?: KlineConnectionCap;
}
