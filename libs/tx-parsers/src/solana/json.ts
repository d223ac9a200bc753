/**
 * Narrowing helpers for raw Solana RPC payloads. They return null / empty values instead of
 * throwing, because the parser must survive any input.
 */

export { isObject, asArray, type JsonObject } from '../json';
import { isObject, type JsonObject } from '../json';

export function asObject(v: unknown): JsonObject | null {
  return isObject(v) ? v : null;
}

export function asString(v: unknown): string | null {
  return typeof v === 'string' ? v : null;
}

/** A non-empty string, e.g. a Base58 pubkey or signature. */
export function asNonEmptyString(v: unknown): string | null {
  return typeof v === 'string' && v.length > 0 ? v : null;
}

const DIGITS_RE = /^[0-9]+$/;

/**
 * Non-negative integer → bigint. Accepts JSON numbers (lamports, fees: already rounded by
 * JSON.parse above 2^53, nothing can be recovered there), digit strings (token amounts, or
 * payloads parsed losslessly) and bigints. Anything else is null.
 */
export function toBigInt(v: unknown): bigint | null {
  if (typeof v === 'number') {
    return Number.isInteger(v) && v >= 0 ? BigInt(v) : null;
  }
  if (typeof v === 'bigint') return v >= 0n ? v : null;
  if (typeof v === 'string' && v.length > 0 && v.length <= 80 && DIGITS_RE.test(v)) return BigInt(v);
  return null;
}

export function toDecimal(v: unknown): string | null {
  const b = toBigInt(v);
  return b === null ? null : b.toString();
}

/** Integer → JS number when it is a safe integer (slots, times, indexes). */
export function toSafeInt(v: unknown): number | null {
  if (typeof v === 'number') return Number.isSafeInteger(v) ? v : null;
  if (typeof v === 'bigint') {
    return v <= BigInt(Number.MAX_SAFE_INTEGER) && v >= BigInt(Number.MIN_SAFE_INTEGER) ? Number(v) : null;
  }
  if (typeof v === 'string' && /^-?[0-9]{1,16}$/.test(v)) {
    const n = Number(v);
    return Number.isSafeInteger(n) ? n : null;
  }
  return null;
}

export function errorMessage(e: unknown): string {
  if (e instanceof Error) return e.message;
  try {
    return String(e);
  } catch {
    return 'unknown error';
  }
}
