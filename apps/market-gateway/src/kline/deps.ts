import type { Contracts, KlinePoolNotice } from '@chainpipe/contracts';
import type { Knex } from '@chainpipe/db';
import type { Principal } from '@chainpipe/http';
import type { Redis } from '@chainpipe/redis';
import type { Clock, Logger } from '@chainpipe/runtime';
import type { Registry } from 'prom-client';

/** The upstream market-data REST API (CoinGecko Pro: https://pro-api.coingecko.com/api/v3). */
export interface MarketUpstream {
  baseUrl: string;
  apiKey: string;
  timeoutMs: number;
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
}
