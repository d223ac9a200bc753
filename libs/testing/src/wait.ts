/**
 * Thrown inside a poll's check: the state seen is one that must never occur (a 500 where only
 * 200 or 503 may appear, a process that exited), so the poll fails at once with it instead of
 * retrying until the timeout and hiding it if it clears.
 */
export class ForbiddenState extends Error {
  override name = 'ForbiddenState';
}

/** Fails the poll it is called in at once (see `ForbiddenState`). */
export function forbidden(message: string): never {
  throw new ForbiddenState(message);
}

/**
 * Polls `check` until it returns a value other than undefined/false, or fails after `timeoutMs`.
 * An ordinary error of `check` (an assertion not yet true, a refused connection) counts as "not
 * yet"; a `ForbiddenState` fails the poll at once. `what` names the condition in the error; as a
 * function it is read when the poll fails, so it can report how far the condition got.
 */
export async function waitFor<T>(
  check: () => Promise<T | undefined | false> | T | undefined | false,
  opts: { timeoutMs?: number; intervalMs?: number; what?: string | (() => string) } = {},
): Promise<T> {
  const what = () => (typeof opts.what === 'function' ? opts.what() : (opts.what ?? 'condition'));
  const deadline = Date.now() + (opts.timeoutMs ?? 15_000);
  let lastError: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined && v !== false) return v as T;
    } catch (err) {
      if (err instanceof ForbiddenState) throw new ForbiddenState(`${what()}: ${err.message}`);
      lastError = err;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what()}${lastError ? `: ${String(lastError)}` : ''}`);
    }
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 100));
  }
}
