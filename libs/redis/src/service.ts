import type { ServiceHost } from '@chainpipe/runtime';
import { createRedis, redisComponent, type Redis, type RedisConfig } from './client';

/**
 * Connects the app's Redis client and registers it to quit after every entry point stopped.
 * `gatesReadiness: false` is for an app whose work goes on without Redis (chain-ingest, which
 * keeps only its rate limits there and counts in memory meanwhile): its `/readyz` then does not
 * fail while Redis is away; `/healthz` still reports it.
 */
export function addRedis(svc: ServiceHost<RedisConfig>, opts: { gatesReadiness?: boolean } = {}): Redis {
  const redis = createRedis({ url: svc.config.REDIS_URL, keyPrefix: svc.config.REDIS_KEY_PREFIX });
  const component = redisComponent(redis);
  svc.use(opts.gatesReadiness === false ? { ...component, ready: () => true } : component);
  return redis;
}
