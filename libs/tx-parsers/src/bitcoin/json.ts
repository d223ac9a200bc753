import { normalizeAddress } from '@chainpipe/chains';

/** Narrowing helpers for raw node JSON: every accessor returns null instead of throwing. */

import { isObject, type JsonObject } from '../json';

export type Obj = JsonObject;
export const isObj = isObject;

export function field(o: unknown, key: string): unknown {
  return isObj(o) ? o[key] : undefined;
}

const HEX64 = /^[0-9a-fA-F]{64}$/;

/** Transaction ids and block hashes: 32 bytes of hex, stored lowercase. */
export function hash32(v: unknown): string | null {
  return typeof v === 'string' && HEX64.test(v) ? v.toLowerCase() : null;
}

export function nonNegInt(v: unknown): number | null {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : null;
}

export function positiveInt(v: unknown): number | null {
  const n = nonNegInt(v);
  return n !== null && n > 0 ? n : null;
}

export function safeInt(v: unknown): number | null {
  return typeof v === 'number' && Number.isSafeInteger(v) ? v : null;
}

// Base58 and bech32 addresses are plain alphanumerics; this also rejects Blockbook's
// pseudo-addresses such as "OP_RETURN (…)" if `isAddress` is missing.
const ADDRESS = /^[A-Za-z0-9]{14,100}$/;

export function address(v: unknown): string | null {
  if (typeof v !== 'string' || !ADDRESS.test(v)) return null;
  return normalizeAddress('utxo', v);
}

/**
 * `addresses[]` (old Core, Blockbook) names one address for standard scripts; bare multisig lists
 * several keys, which is not one owner, so it yields null like any other non-address script.
 */
export function singleAddress(list: unknown): string | null {
  return Array.isArray(list) && list.length === 1 ? address(list[0]) : null;
}

export function errorText(e: unknown): string {
  try {
    return e instanceof Error ? e.message : String(e);
  } catch {
    return 'unknown error';
  }
}
