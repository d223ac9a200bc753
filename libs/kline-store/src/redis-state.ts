import type { HttpKlineIngesterStatus, KlineCandle } from '@chainpipe/contracts';
import { candlesHead, candlesMessage } from '@chainpipe/kline';
import type { Redis } from '@chainpipe/redis';
import { settleAll } from '@chainpipe/runtime';

/**
 * A pool's candles to keep: its key and its kline.candles.v2 records (one, or several when its
 * candles were cut), each as the JSON text that is published: `JSON.stringify(candlesMessage(…))`.
 */
export interface PoolCandleRecords {
  key: string;
  records: readonly string[];
}

/**
 * The latest candle per pool and interval (the WebSocket snapshot): one hash per pool key, a
 * field per interval holding the candle's JSON without its pool's part (`"interval":…}`), and
 * a field `_head` holding the pool's part (`{"pool_id":…,"updated_at":…,`) as last written: a
 * candle read is the two joined (a KlineCandle's JSON, its fields in their order). A candle
 * replaces the stored one only if it does not open earlier, so late or replayed candles never
 * move the snapshot back. One script call for many records, one HMGET and one HSET per record
 * (a command per field cost about twice the Redis time).
 *
 * A record travels as one argument, the very text the aggregator publishes, so no candle's JSON
 * is written twice: the script takes the head (the pool's fields, up to the comma before
 * `"candles":[{`) and cuts the candles at `},{` (a candle holds no braces, and neither can be
 * matched inside a JSON string, where every quote is escaped), reads each one's interval and
 * open_time by a match anchored at its start and the stored one's open_time by a plain search
 * and an anchored match. Of a record's candles of one interval it keeps the latest (the later one
 * of equal open times). An unanchored pattern tried at every position of the JSON was ~40 % of
 * the script's time; an argument a candle, most of the client's cost of this step; the head
 * joined to each candle in the script, a third of the script's time.
 *
 * The head is the pool's last store, so a candle that a later record did not replace (it opens
 * later than that record's) reads with that record's `updated_at`. Its values are still its
 * newest: the hub, which takes the later `updated_at` of two candles with one open time (a
 * snapshot and a push), gets the right one, as Redis is written before the record is published.
 */
const SET_IF_NOT_OLDER = `
local ttl = ARGV[1]
local set = 0
for k = 1, #KEYS do
  local msg = ARGV[k + 1]
  local at = string.find(msg, ',"candles":[{', 1, true)
  if not at then return redis.error_reply('ERR a candles record without candles') end
  local head = string.sub(msg, 1, at)
  local fields, times, tails, slot = {}, {}, {}, {}
  local n, from = 0, at + 13
  while true do
    local interval, t = string.match(msg, '^"interval":"([^"]+)","open_time":(%d+)', from)
    if not interval then return redis.error_reply('ERR a candle without interval and open_time') end
    t = tonumber(t)
    local stop = string.find(msg, '},{', from, true)
    local tail = string.sub(msg, from, stop or (#msg - 2))
    local i = slot[interval]
    if i == nil then
      n = n + 1
      slot[interval] = n
      fields[n], times[n], tails[n] = interval, t, tail
    elseif t >= times[i] then
      times[i], tails[i] = t, tail
    end
    if not stop then break end
    from = stop + 3
  end
  local cur = redis.call('HMGET', KEYS[k], unpack(fields))
  local args = {}
  for i = 1, n do
    local c = cur[i]
    local found = c and string.find(c, '"open_time":', 1, true)
    local stored = found and tonumber(string.match(c, '^%d+', found + 12))
    if not (stored and stored > times[i]) then
      args[#args + 1] = fields[i]
      args[#args + 1] = tails[i]
    end
  end
  if #args > 0 then
    set = set + #args / 2
    args[#args + 1] = '_head'
    args[#args + 1] = head
    redis.call('HSET', KEYS[k], unpack(args))
    redis.call('PEXPIRE', KEYS[k], ttl)
  end
end
return set`;

/**
 * Records per script call: the client's cost per record halves against a call per record, and
 * a call runs alone on the Redis server, so it stays short (a few ms).
 */
const RECORDS_PER_CALL = 100;

const latestKey = (poolKey: string) => `kline:latest:${poolKey}`;
/** The field of a pool's hash holding its part of every candle's JSON (no interval is named so). */
const HEAD_FIELD = '_head';
const STATUS_KEY = 'kline:ingester:status';

/** The script's call: how many records, each record's pool hash, the TTL, then the records' JSON in the same order. */
type WithLatest = Redis & { klineSetLatest(numKeys: number, ...keysThenArgs: (string | number)[]): Promise<number> };

export class LatestCandles {
  private readonly redis: WithLatest;

  constructor(redis: Redis, private readonly ttlMs = 7 * 24 * 3600 * 1000) {
    if (!(redis as unknown as Partial<WithLatest>).klineSetLatest) redis.defineCommand('klineSetLatest', { lua: SET_IF_NOT_OLDER });
    this.redis = redis as unknown as WithLatest;
  }

  /** Candles of one pool (each with its pool's fields, the pool's from the first). */
  async put(poolKey: string, candles: readonly KlineCandle[]): Promise<void> {
    if (!candles.length) return;
    const [first] = candles;
    const head = candlesHead(first.pool_id, first, first.updated_at);
    const values = candles.map((c) => ({ interval: c.interval, open_time: c.open_time, open: c.open, high: c.high, low: c.low, close: c.close, volume: c.volume }));
    await this.putMany([{ key: poolKey, records: [JSON.stringify(candlesMessage(head, values))] }]);
  }

  /**
   * The records of many pools in script calls of up to RECORDS_PER_CALL records each. Each call
   * is written to the socket as soon as it is built, not held for one pipeline at the end: Redis
   * runs the calls while the next ones are built (a pipeline made the step the client's time then
   * the server's, ~250 + ~190 ms at 10,000 pools). A pool's records go in order; a later one's
   * candles are compared with what the earlier one stored.
   */
  async putMany(byPool: Iterable<PoolCandleRecords>): Promise<void> {
    const calls: Promise<number>[] = [];
    let keys: string[] = [];
    let args: string[] = [];
    const flush = () => {
      if (!keys.length) return;
      calls.push(this.redis.klineSetLatest(keys.length, ...keys, this.ttlMs, ...args));
      keys = [];
      args = [];
    };
    for (const { key, records } of byPool) {
      for (const record of records) {
        keys.push(latestKey(key));
        args.push(record);
        if (keys.length === RECORDS_PER_CALL) flush();
      }
    }
    flush();
    // Every call settles before this one does: a caller that retries after a failure does not
    // race calls of the failed attempt still in flight.
    await settleAll(calls);
  }

  /** Latest candles of a pool by interval (only those present). */
  async get(poolKey: string, intervals: readonly string[]): Promise<Map<string, KlineCandle>> {
    const out = new Map<string, KlineCandle>();
    if (!intervals.length) return out;
    const [head, ...values] = await this.redis.hmget(latestKey(poolKey), HEAD_FIELD, ...intervals);
    values.forEach((v, i) => {
      // A whole candle (`{…`) is one stored before the head had a field of its own.
      if (v) out.set(intervals[i], JSON.parse(v.startsWith('{') || head === null ? v : head + v) as KlineCandle);
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
