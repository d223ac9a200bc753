import { type Clock, type Timer, sleepOn } from '@chainpipe/runtime';

interface Pending {
  id: number;
  at: number;
  fn: () => void;
  /** Set for intervals: the period it is rescheduled with after each call. */
  every?: number;
}

/** Lets every promise chain that is already resolvable run to its next real wait. */
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * A `Clock` whose time moves only when the test says so. `advance(ms)` runs the timers that
 * fall due, in order of their due time (then of creation), with `now()` at each one's instant,
 * and lets the promises they resolve settle before the next one: a sleep, a backoff or an
 * interval of minutes is tested in no wall time.
 */
export class ManualClock implements Clock {
  private current: number;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();

  constructor(start = 0) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  setTimeout(fn: () => void, ms: number): Timer {
    return this.add({ id: this.nextId++, at: this.current + Math.max(0, ms), fn });
  }

  setInterval(fn: () => void, ms: number): Timer {
    // A period of 0 would fire forever within one instant.
    const every = Math.max(1, ms);
    return this.add({ id: this.nextId++, at: this.current + every, fn, every });
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return sleepOn(this, ms, signal);
  }

  /** Timers not yet run or cancelled (an interval counts once). */
  get pendingTimers(): number {
    return this.pending.size;
  }

  /** Milliseconds from now to the next due timer, or undefined when none is pending. */
  nextDueIn(): number | undefined {
    const next = this.next();
    return next ? next.at - this.current : undefined;
  }

  /**
   * Moves time forward by `ms`, running each timer due by then at its own instant. Timers that
   * those set, if due within the window, run too. Settles pending promises first and after each
   * timer, so code that awaits before setting its next timer is seen.
   */
  async advance(ms: number): Promise<void> {
    const end = this.current + ms;
    await settle();
    for (let next = this.next(); next && next.at <= end; next = this.next()) {
      this.current = next.at;
      if (next.every === undefined) this.pending.delete(next.id);
      else next.at += next.every;
      next.fn();
      await settle();
    }
    this.current = end;
    await settle();
  }

  /** Advances to the next due timer and runs it (and any due at the same instant). */
  async advanceToNext(): Promise<void> {
    await settle();
    const next = this.next();
    if (next) await this.advance(next.at - this.current);
  }

  private add(p: Pending): Timer {
    this.pending.set(p.id, p);
    const timer: Timer = {
      cancel: () => void this.pending.delete(p.id),
      unref: () => timer,
    };
    return timer;
  }

  private next(): Pending | undefined {
    let best: Pending | undefined;
    for (const p of this.pending.values()) if (!best || p.at < best.at || (p.at === best.at && p.id < best.id)) best = p;
    return best;
  }
}
