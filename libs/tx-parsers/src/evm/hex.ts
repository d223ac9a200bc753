/**
 * Narrowing helpers for raw JSON-RPC values. Every function accepts anything and returns null on
 * a value of the wrong type or form, so callers never throw on malformed payloads.
 */

// uint256 is at most 64 hex digits; longer strings are not quantities (and would make BigInt slow).
const HEX_QUANTITY = /^0x[0-9a-fA-F]{1,64}$/;
const DEC_QUANTITY = /^[0-9]{1,78}$/;
const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const HASH32 = /^0x[0-9a-fA-F]{64}$/;
const WORD_PREFIX = /^0x[0-9a-fA-F]{64}/;
const SELECTOR_PREFIX = /^0x[0-9a-fA-F]{8}/;

export { isObject } from '../json';

/**
 * A non-negative integer from a hex quantity (`0x1a`), a decimal string (OP-stack `l1FeeScalar`
 * is decimal) or a safe JSON number (Parity's `blockNumber`). Unsafe JSON numbers lost precision
 * at parse time, so they are rejected rather than guessed.
 */
export function quantity(v: unknown): bigint | null {
  if (typeof v === 'string') {
    const s = v.trim();
    if (HEX_QUANTITY.test(s)) return BigInt(s);
    if (DEC_QUANTITY.test(s)) return BigInt(s);
    return null;
  }
  if (typeof v === 'number') return Number.isSafeInteger(v) && v >= 0 ? BigInt(v) : null;
  return null;
}

export function quantityString(v: unknown): string | null {
  const q = quantity(v);
  return q === null ? null : q.toString();
}

export function safeInt(v: unknown): number | null {
  const q = quantity(v);
  if (q === null || q > BigInt(Number.MAX_SAFE_INTEGER)) return null;
  return Number(q);
}

export function address(v: unknown): string | null {
  return typeof v === 'string' && ADDRESS.test(v) ? v.toLowerCase() : null;
}

export function hash32(v: unknown): string | null {
  return typeof v === 'string' && HASH32.test(v) ? v.toLowerCase() : null;
}

/** An address stored in a 32-byte topic; null when the upper 12 bytes are not zero. */
export function topicAddress(v: unknown): string | null {
  const h = hash32(v);
  if (h === null || !/^0x0{24}/.test(h)) return null;
  return '0x' + h.slice(26);
}

/** The first 32-byte word of ABI data as an unsigned integer; null when the data is shorter. */
export function firstWord(v: unknown): bigint | null {
  if (typeof v !== 'string' || !WORD_PREFIX.test(v)) return null;
  return BigInt(v.slice(0, 66));
}

/** `0x` + the 4-byte selector of call data; null for empty or shorter input. */
export function methodId(input: unknown): string | null {
  return typeof input === 'string' && SELECTOR_PREFIX.test(input) ? input.slice(0, 10).toLowerCase() : null;
}
