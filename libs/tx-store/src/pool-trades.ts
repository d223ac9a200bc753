import type { Redis } from '@chainpipe/redis';
import type { TransactionResult } from '@chainpipe/contracts';

/**
 * The per-pool FIFO of recent trades (Redis): the latest `capacity` transactions touching a
 * registered pool, newest first. Keys `pool:<chain_type>:<chain_id>:<pool>:order` (tx hash →
 * stored transaction id, the order) and `…:items` (tx hash → TransactionResult JSON). Appending is
 * idempotent: a replayed or re-published transaction replaces its entry instead of adding one.
 */
const APPEND = `
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2])
redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
local cap = tonumber(ARGV[4])
local extra = redis.call('ZCARD', KEYS[1]) - cap
if extra > 0 then
  local old = redis.call('ZRANGE', KEYS[1], 0, extra - 1)
  for _, h in ipairs(old) do redis.call('HDEL', KEYS[2], h) end
  redis.call('ZREMRANGEBYRANK', KEYS[1], 0, extra - 1)
end
return extra
`;

export const POOL_TRADES_CAPACITY = 100;

export class PoolTrades {
  constructor(
    private readonly redis: Redis,
    private readonly capacity = POOL_TRADES_CAPACITY,
  ) {}

  private keys(chainType: string, chainId: number, pool: string) {
    const base = `pool:${chainType}:${chainId}:${pool}:`;
    return { order: `${base}order`, items: `${base}items` };
  }

  async append(chainType: string, chainId: number, pool: string, txId: string, txHash: string, trade: TransactionResult): Promise<void> {
    const k = this.keys(chainType, chainId, pool);
    await this.redis.eval(APPEND, 2, k.order, k.items, txId, txHash, JSON.stringify(trade), this.capacity);
  }

  /** The latest `limit` trades, newest first. */
  async latest(chainType: string, chainId: number, pool: string, limit: number): Promise<TransactionResult[]> {
    const k = this.keys(chainType, chainId, pool);
    const hashes = await this.redis.zrevrange(k.order, 0, limit - 1);
    if (hashes.length === 0) return [];
    const items = await this.redis.hmget(k.items, ...hashes);
    return items.filter((i): i is string => i !== null).map((i) => JSON.parse(i) as TransactionResult);
  }

  async clear(chainType: string, chainId: number, pool: string): Promise<void> {
    const k = this.keys(chainType, chainId, pool);
    await this.redis.del(k.order, k.items);
  }
}
