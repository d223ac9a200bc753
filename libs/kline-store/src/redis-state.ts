import type { KlineCandle } from '@chainpipe/contracts';
import type { Redis } from '@chainpipe/redis';

/**
 * The latest candle per pool and interval (the WebSocket snapshot): one hash per pool key, a
 * field per interval. A candle replaces the stored one only if it does not open earlier, so
 * late or replayed candles never move the snapshot back.
 */
const SET_IF_NOT_OLDER = `
local set = 0
for i = 2, #ARGV, 3 do
  local cur = redis.call('HGET', KEYS[1], ARGV[i])
  local t = cur and tonumber(string.match(cur, '"open_time":(%d+)'))
  if not (t and t > tonumber(ARGV[i + 1])) then
    redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 2])
    set = set + 1
  end
end
if set > 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return set`;

const latestKey = (poolKey: string) => `kline:latest:${poolKey}`;
const STATUS_KEY = 'kline:ingester:status';

/** The script's call: a pool's hash, the TTL, then (interval, open_time, candle JSON) per candle, applied in order. */
type WithLatest = Redis & { klineSetLatest(key: string, ttlMs: number, ...triples: (string | number)[]): Promise<number> };

export class LatestCandles {
  private readonly redis: WithLatest;

  constructor(redis: Redis, private readonly ttlMs = 7 * 24 * 3600 * 1000) {
    if (!(redis as unknown as Partial<WithLatest>).klineSetLatest) redis.defineCommand('klineSetLatest', { numberOfKeys: 1, lua: SET_IF_NOT_OLDER });
    this.redis = redis as unknown as WithLatest;
  }

  async put(poolKey: string, candles: readonly KlineCandle[]): Promise<void> {
    await this.putMany([[poolKey, candles]]);
  }

  /**
   * The candles of many pools in one pipeline, one script call per pool (a handler's batch
   * costs one round trip, not one per pool); a pool's candles are applied in the given order.
   */
  async putMany(byPool: Iterable<readonly [poolKey: string, candles: readonly KlineCandle[]]>): Promise<void> {
    const pipe = this.redis.pipeline() as unknown as WithLatest & { exec: () => Promise<[Error | null, unknown][] | null>; length: number };
    for (const [poolKey, candles] of byPool) {
      if (!candles.length) continue;
      const args: (string | number)[] = [];
      for (const c of candles) args.push(c.interval, c.open_time, JSON.stringify(c));
      void pipe.klineSetLatest(latestKey(poolKey), this.ttlMs, ...args);
    }
    if (!pipe.length) return;
    const results = await pipe.exec();
    const failed = results?.find(([err]) => err);
    if (failed) throw failed[0];
  }

  /** Latest candles of a pool by interval (only those present). */
  async get(poolKey: string, intervals: readonly string[]): Promise<Map<string, KlineCandle>> {
    const out = new Map<string, KlineCandle>();
    if (!intervals.length) return out;
    const values = await this.redis.hmget(latestKey(poolKey), ...intervals);
    values.forEach((v, i) => {
      if (v) out.set(intervals[i], JSON.parse(v) as KlineCandle);
    });
    return out;
  }
}

/** What `GET /api/v1/admin/debug/ingester/status` shows (spec field names). */
export interface IngesterStatus {
  connected: boolean;
  channelConfirmed: boolean;
  lastTickAt: string | null;
  poolCount: number;
  pools: { poolId: number; chainRefId: string; chainType: string; chainId: number; networkId: string; poolAddress: string; token: string }[];
}

export const DISCONNECTED_STATUS: IngesterStatus = { connected: false, channelConfirmed: false, lastTickAt: null, poolCount: 0, pools: [] };

/** The ingester's status, written by it every few seconds with a TTL: a dead ingester reads as disconnected. */
export class IngesterStatusStore {
  constructor(private readonly redis: Redis) {}

  async write(status: IngesterStatus, ttlMs: number): Promise<void> {
    await this.redis.set(STATUS_KEY, JSON.stringify(status), 'PX', ttlMs);
  }

  async read(): Promise<IngesterStatus> {
    const v = await this.redis.get(STATUS_KEY);
    return v ? (JSON.parse(v) as IngesterStatus) : DISCONNECTED_STATUS;
  }
}
