import { createHash } from 'node:crypto';
import type { ChainFamily } from './networks';

const B58_ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const B58_INDEX = new Map([...B58_ALPHABET].map((c, i) => [c, i]));

export function base58Encode(bytes: Uint8Array): string {
  let n = 0n;
  for (const b of bytes) n = (n << 8n) | BigInt(b);
  let out = '';
  while (n > 0n) {
    out = B58_ALPHABET[Number(n % 58n)] + out;
    n /= 58n;
  }
  for (const b of bytes) {
    if (b !== 0) break;
    out = '1' + out;
  }
  return out;
}

/** Decodes Base58; undefined on a character outside the alphabet. */
export function base58Decode(text: string): Buffer | undefined {
  let n = 0n;
  for (const c of text) {
    const v = B58_INDEX.get(c);
    if (v === undefined) return undefined;
    n = n * 58n + BigInt(v);
  }
  const bytes: number[] = [];
  while (n > 0n) {
    bytes.unshift(Number(n & 0xffn));
    n >>= 8n;
  }
  for (const c of text) {
    if (c !== '1') break;
    bytes.unshift(0);
  }
  return Buffer.from(bytes);
}

function sha256d(data: Uint8Array): Buffer {
  return createHash('sha256').update(createHash('sha256').update(data).digest()).digest();
}

/**
 * Tron address conversions. A Tron address is 21 bytes: 0x41 then the 20-byte account; its
 * Base58Check form starts with `T`. Nodes show it as 42 hex chars (`41…`), the eth-compatible
 * JSON-RPC view as `0x` + the 20 bytes.
 */
export function tronHexToBase58(hex: string): string | undefined {
  let h = hex.trim().toLowerCase();
  if (h.startsWith('0x')) h = h.slice(2);
  if (h.length === 40) h = '41' + h;
  if (h.length !== 42 || !h.startsWith('41') || !/^[0-9a-f]+$/.test(h)) return undefined;
  const payload = Buffer.from(h, 'hex');
  const checksum = sha256d(payload).subarray(0, 4);
  return base58Encode(Buffer.concat([payload, checksum]));
}

/** Base58Check Tron address → `41…` hex (42 chars); undefined when the checksum fails. */
export function tronBase58ToHex(address: string): string | undefined {
  const raw = base58Decode(address.trim());
  if (!raw || raw.length !== 25 || raw[0] !== 0x41) return undefined;
  const payload = raw.subarray(0, 21);
  if (!sha256d(payload).subarray(0, 4).equals(raw.subarray(21))) return undefined;
  return payload.toString('hex');
}

/** Base58Check Tron address → `0x` + 20-byte hex, the form the earlier layout stores. */
export function tronBase58ToEvmHex(address: string): string | undefined {
  const hex = tronBase58ToHex(address);
  return hex ? '0x' + hex.slice(2) : undefined;
}

export function isTronBase58(address: string): boolean {
  return /^T[1-9A-HJ-NP-Za-km-z]{33}$/.test(address) && tronBase58ToHex(address) !== undefined;
}

/**
 * The one form an address is stored and matched in, per chain family:
 * EVM lowercase `0x…`; Tron Base58 (`T…`, converted from any hex form); Solana and Bitcoin as
 * given (both are case-sensitive encodings, bech32 is lowercased by convention).
 */
export function normalizeAddress(family: ChainFamily, address: string): string {
  const a = address.trim();
  switch (family) {
    case 'evm':
      return a.toLowerCase();
    case 'tvm': {
      if (a.startsWith('T')) return a;
      return tronHexToBase58(a) ?? a;
    }
    case 'utxo':
      return /^(bc1|tb1|bcrt1)/i.test(a) ? a.toLowerCase() : a;
    case 'svm':
    default:
      return a;
  }
}
