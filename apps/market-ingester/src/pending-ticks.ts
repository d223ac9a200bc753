import type { OutgoingMessage } from '@chainpipe/kafka';
import { backoffMs, sleepOn, type Clock } from '@chainpipe/runtime';

export interface PendingTicksDeps<T> {
  publish: (messages: OutgoingMessage<T>[]) => Promise<void>;
  /** Updates held at most: past it a new one is dropped (`onDropped`), and the ingester is unready while it is reached. */
  maxPending: number;
  /** Updates per publish at most. */
  maxBatch: number;
  /** Wait before publishing again after a failure: doubling from `initialMs` to `maxMs`. */
  retry: { initialMs: number; maxMs: number };
  clock: Pick<Clock, 'setTimeout'>;
  onPublished: (count: number) => void;
  onFailed: (count: number, err: unknown) => void;
  onDropped: (message: OutgoingMessage<T>) => void;
  random?: () => number;
}

/**
 * The updates waiting for the broker, published in the order they came, one publish at a time
 * (so a pool's ticks reach its partition in order), each batch again until the broker takes it:
 * nothing is lost while fewer than `maxPending` wait. A batch published again after a timeout may
 * reach the topic twice, which the aggregator's merges absorb.
 */
export class PendingTicks<T> {
  private queue: OutgoingMessage<T>[] = [];
  /** Index of the first waiting update in `queue` (the published ones before it are cut off in bulk). */
  private head = 0;
  private draining = false;
  private failures = 0;
  private readonly stopping = new AbortController();
  private idle: (() => void)[] = [];

  constructor(private readonly deps: PendingTicksDeps<T>) {}

  get size(): number {
    return this.queue.length - this.head;
  }

  /** The bound is reached: new updates are being dropped. */
  get full(): boolean {
    return this.size >= this.deps.maxPending;
  }

  /** Queues an update for publishing; false when the bound dropped it. */
  push(message: OutgoingMessage<T>): boolean {
    if (this.full || this.stopping.signal.aborted) {
      this.deps.onDropped(message);
      return false;
    }
    this.queue.push(message);
    void this.drain();
    return true;
  }

  private async drain(): Promise<void> {
    if (this.draining) return;
    this.draining = true;
    try {
      while (this.size > 0) {
        const batch = this.queue.slice(this.head, this.head + this.deps.maxBatch);
        try {
          await this.deps.publish(batch);
        } catch (err) {
          this.deps.onFailed(batch.length, err);
          const wait = backoffMs(this.failures++, this.deps.retry.initialMs, this.deps.retry.maxMs, this.deps.random);
          if (this.stopping.signal.aborted) return;
          await sleepOn(this.deps.clock, wait, this.stopping.signal);
          if (this.stopping.signal.aborted) return;
          continue;
        }
        this.failures = 0;
        this.head += batch.length;
        // Cut the published part off once it is most of the array: amortised O(1) an update.
        if (this.head > 1024 && this.head * 2 > this.queue.length) {
          this.queue = this.queue.slice(this.head);
          this.head = 0;
        }
        this.deps.onPublished(batch.length);
      }
    } finally {
      this.draining = false;
      if (this.size === 0) for (const resolve of this.idle.splice(0)) resolve();
    }
  }

  /** Resolves once nothing waits, or after `timeoutMs`; then takes no more and stops retrying. */
  async close(timeoutMs: number): Promise<number> {
    if (this.size > 0) {
      await Promise.race([
        new Promise<void>((resolve) => this.idle.push(resolve)),
        sleepOn(this.deps.clock, timeoutMs),
      ]);
    }
    this.stopping.abort();
    return this.size;
  }
}
