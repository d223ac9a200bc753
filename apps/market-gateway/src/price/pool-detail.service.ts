import { Counter, type Registry } from 'prom-client';
import { addressKey } from '@chainpipe/chains';
import { mapPoolDetail, type PoolDetail } from '@chainpipe/price';
import { type ReferenceRepository } from '@chainpipe/price-store';
import type { Redis } from '@chainpipe/redis';
import type { Clock, Logger } from '@chainpipe/runtime';
import { isUpstreamStatus, upstreamFailure, upstreamJson, upstreamUrl } from '@chainpipe/upstreams';

export class PoolUpstreamError extends Error {}

export interface PoolDetailDeps {
  repo: Pick<ReferenceRepository, 'findChainByProtocolId'>;
  redis: Redis;
  logger: Logger;
  registry: Registry;
  clock: Pick<Clock, 'now'>;
  upstream: { baseUrl: string; apiKey: string; timeoutMs: number };
  cacheTtlMs: number;
}

interface CacheEntry {
  fetched_at: number;
  data: PoolDetail;
}

/**
 * Pool detail relayed from the GeckoTerminal-style upstream, cached in Redis per chain type +
 * chain id + pool address for `cacheTtlMs` (1 h). Freshness is judged by the injected clock
 * against the entry's fetch time (Redis' own expiry, a little later, only collects garbage).
 * Only found pools are cached: an upstream failure or a missing pool never is, so neither
 * poisons the cache. Concurrent misses of one key share one upstream call.
 */
export class PoolDetailService {
  private readonly inFlight = new Map<string, Promise<PoolDetail | null>>();
  private readonly lookups: Counter<'outcome'>;

  constructor(private readonly deps: PoolDetailDeps) {
    this.lookups = new Counter({ name: 'chainpipe_price_pool_lookups_total', help: 'Pool detail look-ups by outcome (cache_hit, fetched, not_found, failed)', labelNames: ['outcome'], registers: [deps.registry] });
  }

  /** null when the chain or the pool does not exist; throws PoolUpstreamError when the upstream fails. */
  async detail(chainType: string, chainId: number, poolAddress: string): Promise<PoolDetail | null> {
    const chain = await this.deps.repo.findChainByProtocolId(chainType, chainId);
    if (!chain?.gecko_network) {
      this.lookups.inc({ outcome: 'not_found' });
      return null;
    }
    const address = addressKey(chainType, poolAddress);
    const key = `price:pool:${chainType}:${chainId}:${address}`;
    const cached = await this.deps.redis.get(key);
    if (cached) {
      const entry = JSON.parse(cached) as CacheEntry;
      if (this.deps.clock.now() - entry.fetched_at < this.deps.cacheTtlMs) {
        this.lookups.inc({ outcome: 'cache_hit' });
        return entry.data;
      }
    }
    let pending = this.inFlight.get(key);
    if (!pending) {
      pending = this.fetchAndCache(key, chain.gecko_network, address).finally(() => this.inFlight.delete(key));
      this.inFlight.set(key, pending);
    }
    return pending;
  }

  private async fetchAndCache(key: string, network: string, address: string): Promise<PoolDetail | null> {
    const { baseUrl, apiKey, timeoutMs } = this.deps.upstream;
    const path = `/networks/${encodeURIComponent(network)}/pools/${encodeURIComponent(address)}?include=base_token,quote_token,dex`;
    let detail: PoolDetail;
    try {
      const body = await upstreamJson({ url: upstreamUrl(baseUrl, path), headers: { accept: 'application/json', ...(apiKey ? { 'x-cg-pro-api-key': apiKey } : {}) }, timeoutMs });
      detail = mapPoolDetail(network, body);
    } catch (err) {
      if (isUpstreamStatus(err, 404)) {
        this.lookups.inc({ outcome: 'not_found' });
        return null;
      }
      const why = upstreamFailure(err);
      this.lookups.inc({ outcome: 'failed' });
      this.deps.logger.warn({ msg: 'pool_upstream_failed', network, address, err: why });
      throw new PoolUpstreamError(why);
    }
    const entry: CacheEntry = { fetched_at: this.deps.clock.now(), data: detail };
    // A cache write failing must not fail the answer we already have.
    await this.deps.redis.set(key, JSON.stringify(entry), 'PX', this.deps.cacheTtlMs + 60_000).catch((err: Error) => this.deps.logger.warn({ msg: 'pool_cache_write_failed', err: err.message }));
    this.lookups.inc({ outcome: 'fetched' });
    return detail;
  }
}
