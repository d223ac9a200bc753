import type { Redis } from '@chainpipe/redis';
import type { Clock } from '@chainpipe/runtime';
import { CONFIG_DEFAULTS } from '../management/app-config';
import type { AppConfigRepository } from '@chainpipe/tx-store';

/**
 * Pushes kept per application for re-sending, in Redis so every gateway copy sees the same
 * state: a client that reconnects to another copy still gets what it did not acknowledge.
 *
 * Keys of an application (`ws:<app>:…`): `all` (message id → first push time, for pruning and
 * the window), `unacked` (the same for messages not acknowledged yet), `frames` (message id →
 * the push frame as sent), `acked` (message id → ACK time: a replayed push of an acknowledged
 * message is never stored again) and `tx:<chain_type:chain_id:hash>` (message ids of one
 * transaction: ACKs name the transaction, not the message). Everything older than the retention
 * is pruned on write; every key expires after the retention when the application goes quiet.
 *
 * A push stored for the first time is also appended, in the same script, to the fan-out stream
 * (`ws:fanout`, one for every application, capped): every gateway copy reads it and writes the
 * push to its own connections. Storing and announcing are one step, so a push is either in
 * neither (the consumer replays it) or in both. Each entry carries the next number of a counter
 * (`ws:fanout:seq`): a copy that finds a number skipped (it fell behind past the cap) or the
 * counter started again (Redis lost its memory) knows it missed entries (FanoutReader).
 */

const RECORD = `
local cutoff = tonumber(ARGV[4])
local old = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', cutoff)
for _, id in ipairs(old) do redis.call('HDEL', KEYS[3], id) end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', cutoff)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', cutoff)
redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', cutoff)
if redis.call('ZSCORE', KEYS[4], ARGV[1]) then return -1 end
local added = redis.call('ZADD', KEYS[1], 'NX', ARGV[2], ARGV[1])
if added == 1 then
  redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
  redis.call('HSET', KEYS[3], ARGV[1], ARGV[3])
  redis.call('SADD', KEYS[5], ARGV[1])
  local seq = redis.call('INCR', KEYS[7])
  redis.call('XADD', KEYS[6], 'MAXLEN', '~', ARGV[6], '*', 'seq', seq, 'app', ARGV[7], 'id', ARGV[1], 'chain', ARGV[8], 'addrs', ARGV[9], 'frame', ARGV[3])
end
for i = 1, 5 do redis.call('EXPIRE', KEYS[i], ARGV[5]) end
return added
`;

const ACK = `
local ids = redis.call('SMEMBERS', KEYS[3])
for _, id in ipairs(ids) do
  redis.call('ZREM', KEYS[1], id)
  redis.call('ZADD', KEYS[2], ARGV[1], id)
end
redis.call('DEL', KEYS[3])
redis.call('EXPIRE', KEYS[2], ARGV[2])
return #ids
`;

export interface ResendStoreOptions {
  /** How long pushes are kept (seconds): the largest resend window a client can ask for. */
  retentionSeconds: number;
  /** Entries kept in the fan-out stream (about): how far a copy may fall behind its live feed. */
  fanoutMaxEntries?: number;
}

/** The fan-out stream every copy reads: one entry per push stored for the first time. */
export const FANOUT_STREAM = 'ws:fanout';
/** The counter numbering the fan-out stream's entries (1, 2, …): a gap in the numbers is a missed entry. */
export const FANOUT_SEQ = 'ws:fanout:seq';

/** A push as announced on the fan-out stream. */
export interface FanoutPush {
  /** The entry's number (`FANOUT_SEQ`); undefined on an entry written before entries were numbered. */
  seq?: number;
  appId: string;
  messageId: string;
  chainType: string;
  listenAddress: string[];
  frame: string;
}

/** Who a push is for and its frame, as `record` announces it. */
export type PushToRecord = Omit<FanoutPush, 'frame' | 'seq'> & { txKey: string; frame: string; atMs: number };

/** Outcome of `record`: stored now, already stored (another copy, or a replay), or acknowledged already. */
export type RecordOutcome = 'stored' | 'known' | 'acked';

export class ResendStore {
  constructor(
    private readonly redis: Redis,
    private readonly opts: ResendStoreOptions,
  ) {}

  private keys(appId: string) {
    const base = `ws:${appId}:`;
    return { all: `${base}all`, unacked: `${base}unacked`, frames: `${base}frames`, acked: `${base}acked`, tx: (k: string) => `${base}tx:${k}` };
  }

  /** Stores a push and, when it is new, announces it on the fan-out stream (one script). */
  async record(p: PushToRecord): Promise<RecordOutcome> {
    const k = this.keys(p.appId);
    const cutoff = p.atMs - this.opts.retentionSeconds * 1000;
    const res = (await this.redis.eval(
      RECORD,
      7,
      k.all,
      k.unacked,
      k.frames,
      k.acked,
      k.tx(p.txKey),
      FANOUT_STREAM,
      FANOUT_SEQ,
      p.messageId,
      p.atMs,
      p.frame,
      cutoff,
      this.opts.retentionSeconds,
      this.opts.fanoutMaxEntries ?? 10_000,
      p.appId,
      p.chainType,
      JSON.stringify(p.listenAddress),
    )) as number;
    return res === 1 ? 'stored' : res === 0 ? 'known' : 'acked';
  }

  /** Acknowledges every push of the transaction; returns how many were pending. */
  async ack(appId: string, txKey: string, atMs: number): Promise<number> {
    const k = this.keys(appId);
    return (await this.redis.eval(ACK, 3, k.unacked, k.acked, k.tx(txKey), atMs, this.opts.retentionSeconds)) as number;
  }

  /** Frames not acknowledged, first pushed at or after `sinceMs`, oldest first. */
  async unackedSince(appId: string, sinceMs: number): Promise<string[]> {
    const k = this.keys(appId);
    const ids = await this.redis.zrangebyscore(k.unacked, sinceMs, '+inf');
    if (ids.length === 0) return [];
    const frames = await this.redis.hmget(k.frames, ...ids);
    return frames.filter((f): f is string => f !== null);
  }

  /** A push by its message id while it is retained (acknowledged or not). */
  async frame(appId: string, messageId: string): Promise<string | undefined> {
    return (await this.redis.hget(this.keys(appId).frames, messageId)) ?? undefined;
  }
}

/**
 * The applications' `ws_ack_resend_interval_seconds`, read from their configuration and kept for
 * `ttlMs` (WS_RESEND_CONFIG_CACHE_MS: a change takes effect within it); the default for an
 * application without one.
 */
export function resendIntervals(configs: Pick<AppConfigRepository, 'find'>, clock: Pick<Clock, 'now'>, ttlMs: number): (appId: string) => Promise<number> {
  const cache = new Map<string, { seconds: number; at: number }>();
  return async (appId) => {
    const hit = cache.get(appId);
    if (hit && clock.now() - hit.at < ttlMs) return hit.seconds;
    const row = await configs.find(appId);
    const seconds = row?.ws_ack_resend_interval_seconds ?? CONFIG_DEFAULTS.ws_ack_resend_interval_seconds;
    if (cache.size > 10_000) cache.clear();
    cache.set(appId, { seconds, at: clock.now() });
    return seconds;
  };
}
