import type { Contracts } from '@chainpipe/contracts';
import type { Knex } from '@chainpipe/db';
import type { Principal } from '@chainpipe/http';
import type { Redis } from '@chainpipe/redis';
import type { Clock, Logger } from '@chainpipe/runtime';
import type { Registry } from 'prom-client';
import type { FreshnessLimits } from '@chainpipe/price';

/** What the token price routes use. */
export interface PriceDeps {
  db: Knex;
  redis: Redis;
  contracts: Contracts;
  logger: Logger;
  registry: Registry;
  resolveKey: (token: string) => Promise<Principal | undefined>;
  /** Injected so tests control time (pool cache expiry, quote age). */
  clock: Pick<Clock, 'now'>;
  bodyLimitBytes: number;
  /** How old (by their source timestamp) quotes and fiat rates may be to be served. */
  freshness: FreshnessLimits;
  /** How old the in-memory tokens and fiats may get before a background reload. */
  referenceRefreshMs: number;
  poolUpstream: { baseUrl: string; apiKey: string; timeoutMs: number };
  poolCacheTtlMs: number;
}
