import type { HttpKlineIngesterStatus, KlineCandle, KlineCandlesMessage } from '@chainpipe/contracts';
import { INTERVALS, SNAPSHOT_TIME_WIDTH, candleSnapshot, candlesHead, candlesMessage, newerCandle, poolCandle } from '@chainpipe/kline';
import type { Redis } from '@chainpipe/redis';
import { settleAll } from '@chainpipe/runtime';

/** A kline.candles.v2 record: its value and the JSON text that is published. */
export interface CandleRecord {
  value: KlineCandlesMessage;
  json: string;
}

/** A pool's candles to keep: its key and its records (one, or several when its candles were cut), in order. */
export interface PoolCandleRecords {
  key: string;
  records: readonly CandleRecord[];
}

/**
 * The latest candle per pool and interval (the WebSocket snapshot): one hash per pool key, whose
 * field `_r` holds a kline.candles.v2 record of those candles (one an interval) and `_t` their
 * open times (`candleSnapshot`: a fixed-width slot an interval, compared as text). A candle
 * replaces the stored one of its interval only if it does not open earlier, so late or replayed
 * candles never move the snapshot back.
 *
 * A record goes in as two arguments, its times and its JSON: the very text the aggregator
 * publishes, unless the record held several candles of an interval. When its times are no less
 * than the stored ones in any slot (it has every interval stored, none opening earlier: a pool's
 * next call, or the same one again), it replaces the whole snapshot, and the script reads none of
 * its JSON. Else (a late tick, a record cut in parts, a pool whose ticks came in another
 * interval) the script cuts both records' candles at `},{` (a candle holds no braces, and neither
 * can be matched inside a JSON string, where every quote is escaped) and keeps the newer of each
 * interval, in a record with the pool's part of the later one. The first way costs Redis about
 * 9 µs a record; a field per interval, written and compared candle by candle, cost 28–31.
 *
 * The record's pool part is that of the pool's last store, so a candle a later record did not
 * replace (it opens later than that record's) reads with that record's `updated_at`. Its values
 * are still its newest: the hub, which takes the later `updated_at` of two candles with one open
 * time (a snapshot and a push), gets the right one, as Redis is written before the record is
 * published.
 *
 * Hashes written before (a field per interval holding the candle without the pool's part, the
 * pool's part in `_head`, or whole candles before that) are read beside `_r`, the newer candle of
 * an interval winning: an aggregator of the earlier kind may still write them while a roll is
 * under way. They are left to expire with their hash.
 */
const SET_IF_NOT_OLDER = `
local ttl = ARGV[1]
local W = ${SNAPSHOT_TIME_WIDTH}
local SLOT = {${INTERVALS.map((interval, i) => `['${interval}'] = ${i + 1}`).join(', ')}}

-- A record's pool part (up to the comma before "candles") and its candles by slot, each as
-- '"interval":…}'; nil when it is no record of one candle an interval.
local function cut(msg)
  local at = string.find(msg, ',"candles":[{', 1, true)
  if not at then return nil end
  local tails, from = {}, at + 13
  while true do
    local slot = SLOT[string.match(msg, '^"interval":"([^"]+)"', from) or '']
    if not slot or tails[slot] then return nil end
    local stop = string.find(msg, '},{', from, true)
    tails[slot] = string.sub(msg, from, stop or (#msg - 2))
    if not stop then break end
    from = stop + 3
  end
  return string.sub(msg, 1, at), tails
end

local stored = 0
for k = 1, #KEYS do
  local key, times, msg = KEYS[k], ARGV[2 * k], ARGV[2 * k + 1]
  local was = redis.call('HGET', key, '_t')
  local older = false
  -- Times of another length were written for another list of intervals: the record replaces them.
  if was and was ~= times and #was == #times then
    for s = 1, #times, W do
      if string.sub(times, s, s + W - 1) < string.sub(was, s, s + W - 1) then older = true break end
    end
  end
  local taken = 1
  if older then
    local head, new = cut(msg)
    if not head then return redis.error_reply('ERR a candles record without one candle an interval') end
    local _, old = cut(redis.call('HGET', key, '_r') or '')
    if old then
      local parts, slots = {}, {}
      taken = 0
      for s = 1, #times / W do
        local a = string.sub(times, (s - 1) * W + 1, s * W)
        local b = string.sub(was, (s - 1) * W + 1, s * W)
        if a < b and old[s] then
          slots[s] = b
          parts[#parts + 1] = old[s]
        else
          slots[s] = a
          if new[s] then
            parts[#parts + 1] = new[s]
            taken = taken + 1
          end
        end
      end
      msg = head .. '"candles":[{' .. table.concat(parts, ',{') .. ']}'
      times = table.concat(slots)
    end
  end
  -- A record older in every interval (a replay) changes nothing.
  if taken > 0 then
    redis.call('HSET', key, '_r', msg, '_t', times)
    redis.call('PEXPIRE', key, ttl)
    stored = stored + 1
  end
end
return stored`;

/**
 * Records per script call: the client's cost per record halves against a call per record, and
 * a call runs alone on the Redis server, so it stays short (a few ms).
 */
const RECORDS_PER_CALL = 100;

const latestKey = (poolKey: string) => `kline:latest:${poolKey}`;
/** The fields of a pool's hash: the snapshot record and its open times. */
const RECORD_FIELD = '_r';
/** The field of the earlier hashes holding the pool's part of every candle's JSON (no interval is named so). */
const EARLIER_HEAD_FIELD = '_head';
const STATUS_KEY = 'kline:ingester:status';

/** The script's call: how many records, each record's pool hash, the TTL, then each record's times and JSON in the same order. */
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
    const value = candlesMessage(
      head,
      candles.map((c) => ({ interval: c.interval, open_time: c.open_time, open: c.open, high: c.high, low: c.low, close: c.close, volume: c.volume })),
    );
    await this.putMany([{ key: poolKey, records: [{ value, json: JSON.stringify(value) }] }]);
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
    const slotTexts = new Map<number, string>();
    for (const { key, records } of byPool) {
      for (const record of records) {
        const snapshot = candleSnapshot(record, slotTexts);
        keys.push(latestKey(key));
        args.push(snapshot.times, snapshot.json);
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
    const [record, head, ...earlier] = await this.redis.hmget(latestKey(poolKey), RECORD_FIELD, EARLIER_HEAD_FIELD, ...intervals);
    if (record) {
      const wanted = new Set(intervals);
      const message = JSON.parse(record) as KlineCandlesMessage;
      for (const c of message.candles) if (wanted.has(c.interval)) out.set(c.interval, poolCandle(message, c));
    }
    earlier.forEach((v, i) => {
      // A whole candle (`{…`) is one stored before the pool's part had a field of its own.
      if (v) out.set(intervals[i], newerCandle(out.get(intervals[i]), JSON.parse(v.startsWith('{') || head === null ? v : head + v) as KlineCandle)!);
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
