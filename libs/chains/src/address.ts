import { sha256 } from '@noble/hashes/sha2';
import { base58, createBase58check } from '@scure/base';
import type { ChainFamily } from './catalog';

/**
 * The address codecs of every chain family come from kept, audited libraries (`@scure/base`
 * over `@noble/hashes`), not code of our own: Base58 (Solana keys, Tron), Base58Check (Tron,
 * Bitcoin P2PKH/P2SH), bech32/bech32m (segwit, Cosmos) and keccak-256 for EIP-55.
 */
export const base58check = createBase58check(sha256);

export function base58Encode(bytes: Uint8Array): string {
  return base58.encode(bytes);
}

/** Decodes Base58; undefined on a character outside the alphabet. */
export function base58Decode(text: string): Buffer | undefined {
  try {
    return Buffer.from(base58.decode(text));
  } catch {
    return undefined;
  }
}

/** Base58Check payload (version byte included), undefined when not Base58 or the checksum fails. */
export function base58CheckDecode(text: string): Buffer | undefined {
  try {
    return Buffer.from(base58check.decode(text));
  } catch {
    return undefined;
  }
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
  return base58check.encode(Buffer.from(h, 'hex'));
}

/** Base58Check Tron address → `41…` hex (42 chars); undefined when the checksum fails. */
export function tronBase58ToHex(address: string): string | undefined {
  const payload = base58CheckDecode(address.trim());
  if (!payload || payload.length !== 21 || payload[0] !== 0x41) return undefined;
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
