/** A pending timeout or interval. */
export interface Timer {
  /** Stops it; later calls do nothing. */
  cancel(): void;
  /** Lets the process exit while it is pending, as Node's `unref`. Returns the timer itself. */
  unref(): Timer;
}

/**
 * Time as the code that depends on it sees it: the current instant and timers. Code that waits,
 * expires or repeats takes a `Clock` (default `systemClock`), so a test can drive it with a
 * manual clock (`ManualClock` of the test kit) instead of waiting for the wall clock.
 */
export interface Clock {
  /** Unix milliseconds. */
  now(): number;
  /** Calls `fn` once, `ms` from now. */
  setTimeout(fn: () => void, ms: number): Timer;
  /** Calls `fn` every `ms`, the first time `ms` from now, until cancelled. */
  setInterval(fn: () => void, ms: number): Timer;
  /**
   * Waits `ms`, or less when `signal` aborts: it resolves then, it does not throw (the caller
   * checks the signal).
   */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/**
 * `sleep` in terms of a clock's `setTimeout`. The abort listener is removed when the time is up,
 * so a long-lived signal shared by many sleeps (a consumer's) does not collect listeners.
 */
export function sleepOn(clock: Pick<Clock, 'setTimeout'>, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const onAbort = () => {
      timer.cancel();
      resolve();
    };
    const timer = clock.setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * A Node timer as a `Timer`. A class rather than an object of closures: the HTTP kit arms one per
 * request (its deadline), and methods on the prototype cost no allocation per timer.
 */
class NodeTimer implements Timer {
  constructor(
    private readonly handle: NodeJS.Timeout,
    private readonly clear: (h: NodeJS.Timeout) => void,
  ) {}

  cancel(): void {
    this.clear(this.handle);
  }

  unref(): Timer {
    this.handle.unref();
    return this;
  }
}

/** The wall clock and Node's timers. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => new NodeTimer(setTimeout(fn, ms), clearTimeout),
  setInterval: (fn, ms) => new NodeTimer(setInterval(fn, ms), clearInterval),
  sleep: (ms, signal) => sleepOn(systemClock, ms, signal),
};

/** `systemClock.sleep`: waits `ms`, or less when `signal` aborts (it resolves then). */
export const sleep = (ms: number, signal?: AbortSignal): Promise<void> => systemClock.sleep(ms, signal);

/**
 * `AbortSignal.timeout` on a clock: a signal that aborts with a `TimeoutError` `ms` from now.
 * `cancel` stops the timer once the work ended, so a finished call leaves nothing pending.
 * With `follow`, the signal also aborts when that one does (with its reason): one signal for
 * "the caller gave up or the deadline passed" without `AbortSignal.any`, whose dependent-signal
 * bookkeeping is a measurable part of a short call. `timedOut` tells the two apart.
 */
export function timeoutSignal(clock: Pick<Clock, 'setTimeout'>, ms: number, follow?: AbortSignal): { signal: AbortSignal; timedOut(): boolean; cancel(): void } {
  const controller = new AbortController();
  let timedOut = false;
  const timer = clock.setTimeout(() => {
    timedOut = !controller.signal.aborted;
    controller.abort(new DOMException(`timed out after ${ms} ms`, 'TimeoutError'));
  }, ms);
  const onFollowed = () => controller.abort(follow?.reason);
  if (follow?.aborted) onFollowed();
  else follow?.addEventListener('abort', onFollowed, { once: true });
  return {
    signal: controller.signal,
    timedOut: () => timedOut,
    cancel: () => {
      timer.cancel();
      follow?.removeEventListener('abort', onFollowed);
    },
  };
}
