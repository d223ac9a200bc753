/**
 * Errors say what the caller should do. A `RetryableError` means "the same work may succeed
 * later" (a dependency is down, a timeout); a `NonRetryableError` means "this input will never
 * succeed" (schema violation, poison message). Anything else is treated as a bug: retryable by
 * consumers (it may be a transient fault), reported and counted.
 */
export class RetryableError extends Error {
  readonly retryable = true;
  constructor(message: string, readonly code = 'RETRYABLE', options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'RetryableError';
  }
}

export class NonRetryableError extends Error {
  readonly retryable = false;
  constructor(message: string, readonly code = 'NON_RETRYABLE', options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'NonRetryableError';
  }
}

export function isNonRetryable(err: unknown): boolean {
  return err instanceof NonRetryableError || (typeof err === 'object' && err !== null && (err as { retryable?: unknown }).retryable === false);
}

export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}

export const sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(t);
      resolve();
    }, { once: true });
  });

/** Exponential backoff with full jitter, capped. `attempt` starts at 0. */
export function backoffMs(attempt: number, initialMs: number, maxMs: number, random: () => number = Math.random): number {
  const ceiling = Math.min(maxMs, initialMs * 2 ** attempt);
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}
