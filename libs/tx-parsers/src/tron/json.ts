/**
 * Narrowing helpers for raw Tron payloads. Everything here returns undefined/null instead of
 * throwing, because parsers must survive any input.
 */

export { isObject, asArray, type JsonObject } from '../json';
import { isObject, type JsonObject } from '../json';

export function asObject(v: unknown): JsonObject | undefined {
  return isObject(v) ? v : undefined;
}

export function asString(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

export function strip0x(hex: string): string {
  return hex.startsWith('0x') || hex.startsWith('0X') ? hex.slice(2) : hex;
}

const HEX_RE = /^[0-9a-fA-F]*$/;

export function isHex(s: string): boolean {
  return HEX_RE.test(s);
}

/**
 * Non-negative integer quantity → decimal string. Accepts JSON numbers (node API: sun amounts,
 * fees), decimal strings and `0x` hex strings (eth JSON-RPC view). Negative, fractional or
 * malformed values give null.
 */
export function toDecimal(v: unknown): string | null {
  if (typeof v === 'number') {
    if (!Number.isInteger(v) || v < 0) return null;
    return BigInt(v).toString();
  }
  if (typeof v === 'bigint') return v >= 0n ? v.toString() : null;
  if (typeof v !== 'string') return null;
  const s = v.trim();
  if (/^0[xX][0-9a-fA-F]+$/.test(s)) return BigInt(s).toString();
  if (/^[0-9]+$/.test(s)) return BigInt(s).toString();
  return null;
}

/** Bare hex (no prefix, as in Tron log data and call data words) → decimal string. */
export function hexToDecimal(hex: string): string | null {
  const h = strip0x(hex);
  if (h.length === 0 || !isHex(h)) return null;
  return BigInt('0x' + h).toString();
}

/** Integer quantity → JS number when it is a safe integer (heights, indexes, timestamps). */
export function toSafeInt(v: unknown): number | null {
  const d = toDecimal(v);
  if (d === null) return null;
  const n = Number(d);
  return Number.isSafeInteger(n) ? n : null;
}

/** Millisecond timestamp → Unix seconds. */
export function msToSeconds(v: unknown): number | null {
  const ms = toSafeInt(v);
  return ms === null ? null : Math.floor(ms / 1000);
}

/** Product of two decimal strings, null when either is missing. */
export function multiplyDecimal(a: string | null, b: string | null): string | null {
  if (a === null || b === null) return null;
  return (BigInt(a) * BigInt(b)).toString();
}

/** 64-hex transaction / block id, lowercase, without `0x`; undefined when malformed. */
export function normalizeHash(v: unknown): string | undefined {
  const s = asString(v);
  if (s === undefined) return undefined;
  const h = strip0x(s.trim()).toLowerCase();
  return h.length === 64 && isHex(h) ? h : undefined;
}
