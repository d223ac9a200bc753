import type { Clock } from '@chainpipe/runtime';

/**
 * Values that move like a market: each read at least `stepMs` after the last one moves the value
 * by a random relative step (±`volatility` at most) and stamps it anew. A pinned value keeps its
 * value (still stamped anew, as a live source re-confirms an unchanged price), so a test can
 * publish a known quote upstream and wait for it downstream.
 */
export class RandomWalk {
  private value: number;
  private at: number;
  private pinned = false;

  constructor(
    initial: number,
    private readonly opts: { volatility: number; stepMs: number } & WalkDrivers,
  ) {
    this.value = initial;
    this.at = opts.clock.now();
  }

  /** The current value and the time it last changed (Unix ms). */
  read(): { value: number; at: number } {
    const now = this.opts.clock.now();
    if (now - this.at >= this.opts.stepMs) {
      if (!this.pinned) this.value *= 1 + (this.opts.random() * 2 - 1) * this.opts.volatility;
      this.at = now;
    }
    return { value: this.value, at: this.at };
  }

  pin(value: number): void {
    this.value = value;
    this.at = this.opts.clock.now();
    this.pinned = true;
  }

  unpin(): void {
    this.pinned = false;
  }
}

/** What moves a walk: time, and chance. */
export interface WalkDrivers {
  clock: Pick<Clock, 'now'>;
  random: () => number;
}
