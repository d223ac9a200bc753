import type { Redis } from './client';
import { execPipeline } from './pipeline';
import type { Clock } from '@chainpipe/runtime';

/**
 * Open WebSocket connections per API key across every gateway copy, in Redis: one sorted set
 * per key (`ws:conns:<keyId>`, or under the cap's own `keyPrefix`) of connection ids scored by
 * when their lease ends. A copy renews the leases of its open connections every `leaseMs / 3`;
 * the leases of a copy that died without closing its connections run out, so its slots come back
 * within `leaseMs`. Used by tx-gateway's push WebSocket and the candlestick hub, each with a key
 * prefix of its own (a key's connections to one service do not take the other's slots).
 */

const ACQUIRE = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return 1
`;

export interface ConnectionCapOptions {
  maxPerKey: number;
  /** How long a connection holds its slot without a renewal. */
  leaseMs: number;
  /** Prefix of the per-key sets; `ws:conns:` (tx-gateway's) unless given. */
  keyPrefix?: string;
}

export class ConnectionCap {
  constructor(
    private readonly redis: Redis,
    private readonly opts: ConnectionCapOptions,
    private readonly clock: Pick<Clock, 'now'>,
  ) {}

  private key(keyId: string): string {
    return `${this.opts.keyPrefix ?? 'ws:conns:'}${keyId}`;
  }

  /** Takes a slot for a connection of the key; false when the key has `maxPerKey` open already. */
  async acquire(keyId: string, connectionId: string): Promise<boolean> {
    const now = this.clock.now();
    const res = await this.redis.eval(ACQUIRE, 1, this.key(keyId), now, now + this.opts.leaseMs, this.opts.maxPerKey, connectionId, this.opts.leaseMs);
    return res === 1;
  }

  async release(keyId: string, connectionId: string): Promise<void> {
    await this.redis.zrem(this.key(keyId), connectionId);
  }

  /**
   * Extends the leases of this copy's open connections, and enters again any the set lost (Redis
   * restarted without its data, or a lease ran out while this copy stalled): an open connection
   * always counts. A connection released before this call is not among `connections`, and its
   * ZREM goes over the same Redis connection in call order, so nothing closed is entered again.
   */
  async renew(connections: Iterable<{ keyId: string; connectionId: string }>): Promise<void> {
    const until = this.clock.now() + this.opts.leaseMs;
    const batch = this.redis.pipeline();
    let n = 0;
    for (const c of connections) {
      batch.zadd(this.key(c.keyId), until, c.connectionId);
      batch.pexpire(this.key(c.keyId), this.opts.leaseMs);
      n += 1;
    }
    if (n === 0) return;
    // A pipeline resolves with each command's error rather than failing: a renewal that did not
    // land must say so (the periodic job logs it), not pass for done.
    const failed = (await execPipeline(batch)).find(([err]) => err);
    if (failed) throw failed[0];
  }
}
