import type { ErrorCode } from './error-codes';

/**
 * Errors say what the caller should do. A `RetryableError` means "the same work may succeed
 * later" (a dependency is down, a timeout); a `NonRetryableError` means "this input will never
 * succeed" (schema violation, poison message). Anything else is treated as a bug: retryable by
 * consumers (it may be a transient fault), reported and counted.
 */
export class RetryableError extends Error {
  readonly retryable = true;
  constructor(message: string, readonly code: ErrorCode = 'RETRYABLE', options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'RetryableError';
  }
}

export class NonRetryableError extends Error {
  readonly retryable = false;
  constructor(message: string, readonly code: ErrorCode = 'NON_RETRYABLE', options?: { cause?: unknown }) {
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

/** Node socket errors and Postgres SQLSTATEs that mean "the server cannot be reached now". */
const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', '57P01', '57P02', '57P03', '53300']);
/** The same from pg, knex's pool and ioredis, which say it in words. */
const UNREACHABLE_MESSAGES =
  /Connection terminated|Connection ended unexpectedly|Client has encountered a connection error|Timeout acquiring a connection|Connection is closed|Reached the max retries per request limit|Stream isn't writeable/i;

/**
 * Whether an error says a dependency (Postgres, Redis) is unreachable or restarting, rather
 * than that the input or our code is wrong: a gateway answers 503, a consumer waits for it
 * without spending its retry budget, and both recover by themselves once it is back.
 */
export function isDependencyUnavailable(err: unknown): boolean {
  for (let e = err as { code?: unknown; name?: unknown; message?: unknown; cause?: unknown } | undefined, depth = 0; e && typeof e === 'object' && depth < 5; depth++) {
    if (typeof e.code === 'string' && (UNREACHABLE_CODES.has(e.code) || e.code.startsWith('08'))) return true;
    if (e.name === 'KnexTimeoutError' || e.name === 'MaxRetriesPerRequestError' || (typeof e.message === 'string' && UNREACHABLE_MESSAGES.test(e.message))) return true;
    e = e.cause as typeof e;
  }
  return false;
}

/** Exponential backoff with full jitter, capped. `attempt` starts at 0. */
export function backoffMs(attempt: number, initialMs: number, maxMs: number, random: () => number = Math.random): number {
  const ceiling = Math.min(maxMs, initialMs * 2 ** attempt);
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}
