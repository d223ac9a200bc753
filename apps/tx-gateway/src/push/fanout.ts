import type { Redis } from '@chainpipe/redis';
import { errorMessage, sleep, type HealthReport, type Logger } from '@chainpipe/runtime';
import { FANOUT_STREAM, type FanoutPush } from './resend-store';

export interface FanoutReaderDeps {
  /** A connection of the reader's own: a blocking read holds it. */
  redis: Redis;
  /** Writes one push to this copy's connections that want it. */
  deliver: (push: FanoutPush) => void;
  /**
   * The reader missed entries (`FanoutGap`): what they announced must reach this copy's
   * connections some other way (WsHub.recoverGap). Called before the entry after the gap is delivered.
   */
  onGap: (gap: FanoutGap) => void;
  logger: Logger;
  /** Longest wait of one read: bounds how long a stop waits for the loop. */
  blockMs?: number;
}

function fieldsOf(flat: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) out[flat[i]] = flat[i + 1];
  return out;
}

/** A fan-out entry as `ResendStore.record` wrote it; undefined for anything else. */
export function parseFanoutEntry(flat: string[]): FanoutPush | undefined {
  const f = fieldsOf(flat);
  if (!f.app || !f.id || !f.frame || f.chain === undefined) return undefined;
  let listenAddress: unknown;
  try {
    listenAddress = JSON.parse(f.addrs ?? '[]');
  } catch {
    return undefined;
  }
  if (!Array.isArray(listenAddress) || !listenAddress.every((a) => typeof a === 'string')) return undefined;
  const seq = f.seq === undefined ? undefined : Number(f.seq);
  return { ...(seq !== undefined && Number.isSafeInteger(seq) ? { seq } : {}), appId: f.app, messageId: f.id, chainType: f.chain, listenAddress, frame: f.frame };
}

/**
 * Entries a reader missed between the last one it saw and the next: `skipped` numbers passed
 * over (the stream was trimmed past the reader: it fell more than the cap behind), or `reset`
 * when the numbering started again (Redis restarted without its data: whatever the stream held
 * that the reader had not read is gone).
 */
export type FanoutGap = { kind: 'skipped'; missed: number } | { kind: 'reset' };

/** Whether entry number `seq` follows `lastSeq` without a gap (pure); undefined when it does or either is unknown. */
export function fanoutGap(lastSeq: number | undefined, seq: number | undefined): FanoutGap | undefined {
  if (lastSeq === undefined || seq === undefined || seq === lastSeq + 1) return undefined;
  return seq > lastSeq ? { kind: 'skipped', missed: seq - lastSeq - 1 } : { kind: 'reset' };
}

/**
 * This copy's live feed: it follows the fan-out stream from the moment it started and hands
 * each push to the hub. Whichever copy's consumer stored a push, every copy writes it to its own
 * clients. What was stored before the start reaches clients through the resend after their
 * handshake; after a lost connection the reader continues from the last entry it saw. The
 * stream is capped, so a copy that falls further behind (stalled, starved) would skip entries
 * silently: the entries' numbers show it, and `onGap` hands the recovery to the hub.
 */
export class FanoutReader {
  private running = false;
  private loop?: Promise<void>;
  private lastId = '0-0';
  /** Number of the last entry seen (undefined before the first numbered one). */
  private lastSeq?: number;
  private failing?: string;
  private readonly log: Logger;

  constructor(private readonly deps: FanoutReaderDeps) {
    this.log = deps.logger.child({ component: 'ws-fanout' });
  }

  async start(): Promise<{ from: string }> {
    const newest = await this.deps.redis.xrevrange(FANOUT_STREAM, '+', '-', 'COUNT', 1);
    this.lastId = newest[0]?.[0] ?? '0-0';
    // An empty stream: the next entry is number 1 (or the counter outlived the trimmed entries; then
    // the first entry read starts the count, nothing was missed since this start).
    this.lastSeq = newest[0] ? parseFanoutEntry(newest[0][1])?.seq : undefined;
    this.running = true;
    this.loop = this.run();
    return { from: this.lastId };
  }

  private async run(): Promise<void> {
    while (this.running) {
      try {
        const res = await this.deps.redis.xread('COUNT', 500, 'BLOCK', this.deps.blockMs ?? 1_000, 'STREAMS', FANOUT_STREAM, this.lastId);
        this.failing = undefined;
        for (const [, entries] of res ?? []) {
          for (const [id, flat] of entries) {
            this.lastId = id;
            const push = parseFanoutEntry(flat);
            if (!push) continue;
            const gap = fanoutGap(this.lastSeq, push.seq);
            this.lastSeq = push.seq;
            if (gap) {
              this.log.warn({ msg: 'ws_fanout_gap', ...gap });
              this.deps.onGap(gap);
            }
            this.deps.deliver(push);
          }
        }
      } catch (err) {
        if (!this.running) return;
        this.failing = errorMessage(err);
        this.log.warn({ msg: 'ws_fanout_read_failed', err: this.failing });
        await sleep(500);
      }
    }
  }

  health(): HealthReport {
    return this.failing ? { state: 'degraded', detail: `fan-out stream: ${this.failing}` } : { state: 'ok' };
  }

  async stop(): Promise<void> {
    this.running = false;
    // Ends a blocked read at once; the loop sees `running` false and returns.
    this.deps.redis.disconnect();
    await this.loop;
  }
}
