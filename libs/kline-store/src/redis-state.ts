import type { HttpKlineIngesterStatus, KlineCandle } from '@chainpipe/contracts';
import { candleJsonTail, candlesHeadJson, type CandlesHead, type CandleValues } from '@chainpipe/kline';
import type { Redis } from '@chainpipe/redis';

/**
 * A pool's candles to keep: its key, its head (the pool and the store time) and the candles;
 * with their JSON if the caller has it (candlesHeadJson, and candleJsonTail of each candle).
 */
export interface PoolCandles {
  key: string;
  head: CandlesHead;
  candles: readonly CandleValues[];
  json?: { head: string; tails: readonly string[] };
}

/**
 * The latest candle per pool and interval (the WebSocket snapshot): one hash per pool key, a
 * field per interval. A candle replaces the stored one only if it does not open earlier, so
 * late or replayed candles never move the snapshot back. One script call for many pools, one
 * HMGET and one HSET per pool (a command per field cost about twice the Redis time).
 *
 * A pool travels as two arguments: its head's JSON (candlesHeadJson) and its candles' JSON tails
 * (candleJsonTail: `"interval":"…","open_time":…` in that order, no newline in them) joined by
 * newlines; the script cuts them apart, reads each one's interval and open_time by an anchored
 * match, the stored one's open_time by a plain search and an anchored match, and stores head and
 * tail together (a KlineCandle). An argument a candle, each the head and the tail concatenated,
 * was most of the client's cost of this step (~1 µs an argument, and a copy of each string to
 * flatten it); three a candle (interval, open_time, JSON) cost more again, and an unanchored
 * pattern tried at every position of the JSON was ~40 % of the script's time.
 */
const SET_IF_NOT_OLDER = `
local ttl = ARGV[1]
local a = 2
local set = 0
for k = 1, #KEYS do
  local head, list = ARGV[a], ARGV[a + 1]
  local fields, times, tails = {}, {}, {}
  local n, from, last = 0, 1, #list
  while from <= last do
    local stop = string.find(list, '\\n', from, true) or (last + 1)
    local tail = string.sub(list, from, stop - 1)
    local interval, t = string.match(tail, '^"interval":"([^"]+)","open_time":(%d+)')
    n = n + 1
    fields[n] = interval
    times[n] = tonumber(t)
    tails[n] = tail
    from = stop + 1
  end
  local cur = redis.call('HMGET', KEYS[k], unpack(fields))
  local args = {}
  for i = 1, n do
    local c = cur[i]
    local at = c and string.find(c, '"open_time":', 1, true)
    local t = at and tonumber(string.match(c, '^%d+', at + 12))
    if not (t and t > times[i]) then
      args[#args + 1] = fields[i]
      args[#args + 1] = head .. tails[i]
    end
  end
  if #args > 0 then
    redis.call('HSET', KEYS[k], unpack(args))
    redis.call('PEXPIRE', KEYS[k], ttl)
    set = set + #args / 2
  end
  a = a + 2
end
return set`;

/**
 * Pools per script call: the client's cost per pool halves against a call per pool (~30 µs
 * instead of ~60 µs, most of it the arguments), and a call runs alone on the Redis server, so it
 * stays short (a few ms).
 */
const POOLS_PER_CALL = 100;

const latestKey = (poolKey: string) => `kline:latest:${poolKey}`;
const STATUS_KEY = 'kline:ingester:status';

/**
 * The script's call: how many pools' hashes, the hashes, the TTL, then per hash its head's JSON
 * and its candles' JSON tails joined by newlines, each interval once.
 */
type WithLatest = Redis & { klineSetLatest(numKeys: number, ...keysThenArgs: (string | number)[]): Promise<number> };

export class LatestCandles {
  private readonly redis: WithLatest;

  constructor(redis: Redis, private readonly ttlMs = 7 * 24 * 3600 * 1000) {
    if (!(redis as unknown as Partial<WithLatest>).klineSetLatest) redis.defineCommand('klineSetLatest', { lua: SET_IF_NOT_OLDER });
    this.redis = redis as unknown as WithLatest;
  }

  async put(poolKey: string, candles: readonly KlineCandle[]): Promise<void> {
    if (!candles.length) return;
    const [first] = candles;
    const head = { pool_id: first.pool_id, chain_type: first.chain_type, chain_id: first.chain_id, pool_address: first.pool_address, token: first.token, updated_at: first.updated_at };
    await this.putMany([{ key: poolKey, head, candles }]);
  }

  /**
   * The candles of many pools in script calls of up to POOLS_PER_CALL pools each; of a pool's
   * candles, the newest of each interval. Each call is written to the socket as soon as it is
   * built, not held for one pipeline at the end: Redis runs the calls while the next ones are
   * built (a pipeline made the step the client's time then the server's, ~250 + ~190 ms at
   * 10,000 pools). Each stored value is the candle with its pool (`KlineCandle`'s JSON, fields
   * in its order), the pool's part sent once per pool and joined to each candle by the script:
   * at 10,000 pools a call writes ~90,000 of them, and the pool's fields copied into an object
   * and stringified per candle were most of the client's cost of this step.
   */
  async putMany(byPool: Iterable<PoolCandles>): Promise<void> {
    const calls: Promise<number>[] = [];
    let keys: string[] = [];
    let args: (string | number)[] = [];
    const flush = () => {
      if (!keys.length) return;
      calls.push(this.redis.klineSetLatest(keys.length, ...keys, this.ttlMs, ...args));
      keys = [];
      args = [];
    };
    const newest = new Map<string, number>();
    for (const { key, head, candles, json } of byPool) {
      if (!candles.length) continue;
      // The newest of each interval (the later one of equal open times): the script compares
      // each with the stored one only, and an older candle of the same call could not stay.
      newest.clear();
      for (let i = 0; i < candles.length; i++) {
        const prev = newest.get(candles[i].interval);
        if (prev === undefined || candles[prev].open_time <= candles[i].open_time) newest.set(candles[i].interval, i);
      }
      keys.push(latestKey(key));
      let tails = '';
      for (const i of newest.values()) tails += (tails ? '\n' : '') + (json?.tails[i] ?? candleJsonTail(candles[i]));
      args.push(json?.head ?? candlesHeadJson(head), tails);
      if (keys.length === POOLS_PER_CALL) flush();
    }
    flush();
    // Every call settles before this one does (allSettled): a caller that retries after a failure
    // does not race calls of the failed attempt still in flight.
    const results = await Promise.allSettled(calls);
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
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

/** What `GET /api/v1/admin/debug/ingester/status` shows (schemas/http/kline/ingester-status.json, spec field names). */
export type IngesterStatus = HttpKlineIngesterStatus;

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
