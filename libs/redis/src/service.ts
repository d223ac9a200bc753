import type { ServiceHost } from '@chainpipe/runtime';
import { createRedis, redisComponent, type Redis, type RedisConfig } from './client';

/** Connects the app's Redis client and registers it to quit after every entry point stopped. */
export function addRedis(svc: ServiceHost<RedisConfig>): Redis {
  const redis = createRedis({ url: svc.config.REDIS_URL, keyPrefix: svc.config.REDIS_KEY_PREFIX });
  svc.use(redisComponent(redis));
  return redis;
}
