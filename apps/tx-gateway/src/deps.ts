import type { ChainOrigins } from '@chainpipe/chains';
import type { Contracts } from '@chainpipe/contracts';
import type { Knex } from '@chainpipe/db';
import type { Principal, RouteRateLimit } from '@chainpipe/http';
import type { TopicProducer } from '@chainpipe/kafka';
import type { Clock, Logger, SecretBox } from '@chainpipe/runtime';
import type { Registry } from 'prom-client';
import type { PoolTrades } from '@chainpipe/tx-store';
import type { RetryReport } from '@chainpipe/webhooks';

/** What the tx-gateway's route modules are built from; each use-case and route group takes the part it needs. */
export interface TxGatewayDeps {
  db: Knex;
  contracts: Contracts;
  producer: Pick<TopicProducer, 'publish'>;
  logger: Logger;
  registry: Registry;
  resolveKey: (token: string) => Promise<Principal | undefined>;
  /** The read nodes: the single-transaction GET's origin lookup. */
  origins: ChainOrigins;
  rpcTimeoutMs: number;
  /** The RPC proxy's own nodes (RPC_PROXY_URLS, falling back to the read nodes) and its answer bound. */
  rpcProxy: {
    origins: ChainOrigins;
    maxAnswerBytes: number;
  };
  /** The RPC proxy's limits per key and per client (`RateLimits.limit`); unlimited without. */
  rpcProxyLimit?: RouteRateLimit;
  secretBox: SecretBox;
  /** Development and tests only: accept http and loopback/private webhook targets. */
  allowPrivateWebhookTargets: boolean;
  /**
   * The manual webhook retry (POST /app/webhook/retry): drains the application's queue now;
   * undefined when a dispatcher is delivering for it at this moment.
   */
  retryWebhooks: (appId: string) => Promise<RetryReport | undefined>;
  /** Recent trades per registered DEX pool (Redis). */
  poolTrades: PoolTrades;
  /** Injected so tests control time. */
  clock: Pick<Clock, 'now'>;
}
