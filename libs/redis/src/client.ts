import Redis, { type RedisOptions } from 'ioredis';
import { str, type ConfigOf, type HealthReport } from '@chainpipe/runtime';

export type { Redis };

export const redisConfig = {
  REDIS_URL: str({ default: 'redis://127.0.0.1:6379/0', doc: 'Redis connection URL' }),
  REDIS_KEY_PREFIX: str({ default: 'chainpipe:', doc: 'prefix of every key (isolates tests and tenants)' }),
};
export type RedisConfig = ConfigOf<typeof redisConfig>;

export function createRedis(opts: { url: string; keyPrefix?: string; extra?: RedisOptions }): Redis {
  return new Redis(opts.url, {
    keyPrefix: opts.keyPrefix,
    // Fail commands fast while disconnected instead of queueing them for ever.
    maxRetriesPerRequest: 2,
    enableOfflineQueue: true,
    lazyConnect: false,
    ...opts.extra,
  });
}

/** A Redis component for the lifecycle: health from the connection state, QUIT on stop. */
export function redisComponent(redis: Redis) {
  return {
    name: 'redis',
    health: (): HealthReport => (redis.status === 'ready' ? { state: 'ok' } : { state: 'degraded', detail: redis.status }),
    ready: () => redis.status === 'ready',
    stop: async () => {
      const ended = redis.status === 'end' ? Promise.resolve() : new Promise<void>((resolve) => redis.once('end', () => resolve()));
      await redis.quit().catch(() => redis.disconnect());
      await ended;
    },
  };
}
