import { createHash } from 'node:crypto';
import { base58Decode, isTronBase58, tronHexToBase58 } from './address';
import type { ChainFamily } from './networks';

/**
 * Address checks per chain family, and the one stored form of each address.
 *
 * The stored form must equal what the parsers index (`normalizeAddress` of @chainpipe/chains), or
 * a monitored address would never match its transactions: EVM lowercase `0x…`; Tron Base58Check
 * `T…` whatever form the client sent; Solana Base58 as given; Bitcoin Base58Check as given and
 * bech32/bech32m lowercase.
 */
export type AddressCheck = { ok: true; address: string } | { ok: false; reason: string };

const ok = (address: string): AddressCheck => ({ ok: true, address });
const bad = (reason: string): AddressCheck => ({ ok: false, reason });

export const MAX_ADDRESS_LENGTH = 128;

export function canonicalAddress(family: ChainFamily, raw: string): AddressCheck {
  const a = raw.trim();
  if (a === '') return bad('is empty');
  if (a.length > MAX_ADDRESS_LENGTH) return bad(`is longer than ${MAX_ADDRESS_LENGTH} characters`);
  switch (family) {
    case 'evm':
      return evmAddress(a);
    case 'tvm':
      return tronAddress(a);
    case 'svm':
      return solanaAddress(a);
    case 'utxo':
      return bitcoinAddress(a);
    default:
      return bad('belongs to an unsupported chain family');
  }
}

function evmAddress(a: string): AddressCheck {
  // EIP-55 mixed-case checksums are not verified (that needs keccak-256): EVM matching is
  // case-insensitive, so a wrongly-cased address still names the same account.
  if (!/^0x[0-9a-fA-F]{40}$/.test(a)) return bad('must be 0x followed by 40 hex digits');
  return ok(a.toLowerCase());
}

function tronAddress(a: string): AddressCheck {
  if (a.startsWith('T')) {
    return isTronBase58(a) ? ok(a) : bad('is not a valid Tron Base58Check address (bad characters, length or checksum)');
  }
  // Hex forms: `41` + 20 bytes (node view), `0x` + 20 bytes (eth-compatible JSON-RPC view).
  if (!/^(0x)?(41)?[0-9a-fA-F]{40}$/.test(a)) return bad('must be a Base58 address starting with T, 41 followed by 40 hex digits, or 0x followed by 40 hex digits');
  const base58 = tronHexToBase58(a);
  return base58 ? ok(base58) : bad('is not a valid Tron hex address');
}

function solanaAddress(a: string): AddressCheck {
  if (!/^[1-9A-HJ-NP-Za-km-z]{32,44}$/.test(a)) return bad('must be 32 to 44 Base58 characters');
  const bytes = base58Decode(a);
  if (!bytes || bytes.length !== 32) return bad('does not decode to a 32-byte public key');
  return ok(a);
}

function sha256d(data: Uint8Array): Buffer {
  return createHash('sha256').update(createHash('sha256').update(data).digest()).digest();
}

/** Bitcoin mainnet: P2PKH `1…`, P2SH `3…` (Base58Check) and segwit `bc1…` (bech32, bech32m). */
function bitcoinAddress(a: string): AddressCheck {
  if (/^bc1/i.test(a)) {
    const program = decodeSegwit('bc', a);
    return program ? ok(a.toLowerCase()) : bad('is not a valid bech32/bech32m mainnet segwit address');
  }
  if (!/^[13][1-9A-HJ-NP-Za-km-z]{24,34}$/.test(a)) return bad('must be a mainnet address starting with 1, 3 or bc1');
  const raw = base58Decode(a);
  if (!raw || raw.length !== 25) return bad('does not decode to a 25-byte Base58Check address');
  if (raw[0] !== 0x00 && raw[0] !== 0x05) return bad('has a version byte other than P2PKH or P2SH mainnet');
  if (!sha256d(raw.subarray(0, 21)).subarray(0, 4).equals(raw.subarray(21))) return bad('has a bad Base58Check checksum');
  return ok(a);
}

// --- bech32 / bech32m (BIP-173, BIP-350) ---------------------------------------------------

const BECH32_CHARSET = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l';
const BECH32_GENERATOR = [0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3];
const BECH32_CONST = 1;
const BECH32M_CONST = 0x2bc830a3;

function polymod(values: number[]): number {
  let chk = 1;
  for (const v of values) {
    const top = chk >>> 25;
    chk = ((chk & 0x1ffffff) << 5) ^ v;
    for (let i = 0; i < 5; i++) if ((top >>> i) & 1) chk ^= BECH32_GENERATOR[i];
  }
  return chk >>> 0;
}

function hrpExpand(hrp: string): number[] {
  const codes = [...hrp].map((c) => c.charCodeAt(0));
  return [...codes.map((c) => c >> 5), 0, ...codes.map((c) => c & 31)];
}

function decodeBech32(text: string): { hrp: string; data: number[]; variant: 'bech32' | 'bech32m' } | undefined {
  if (text.length > 90) return undefined;
  if (text !== text.toLowerCase() && text !== text.toUpperCase()) return undefined;
  const s = text.toLowerCase();
  const sep = s.lastIndexOf('1');
  if (sep < 1 || sep + 7 > s.length) return undefined;
  const hrp = s.slice(0, sep);
  if ([...hrp].some((c) => c.charCodeAt(0) < 33 || c.charCodeAt(0) > 126)) return undefined;
  const data: number[] = [];
  for (const c of s.slice(sep + 1)) {
    const v = BECH32_CHARSET.indexOf(c);
    if (v < 0) return undefined;
    data.push(v);
  }
  const check = polymod([...hrpExpand(hrp), ...data]);
  const variant = check === BECH32_CONST ? 'bech32' : check === BECH32M_CONST ? 'bech32m' : undefined;
  if (!variant) return undefined;
  return { hrp, data: data.slice(0, -6), variant };
}

function convertBits(data: number[], from: number, to: number): number[] | undefined {
  let acc = 0;
  let bits = 0;
  const out: number[] = [];
  const maxv = (1 << to) - 1;
  const maxAcc = (1 << (from + to - 1)) - 1;
  for (const value of data) {
    acc = ((acc << from) | value) & maxAcc;
    bits += from;
    while (bits >= to) {
      bits -= to;
      out.push((acc >> bits) & maxv);
    }
  }
  // No padding on decode: leftover bits must be fewer than `from` and all zero.
  if (bits >= from || ((acc << (to - bits)) & maxv) !== 0) return undefined;
  return out;
}

/** The witness version and program of a segwit address of `hrp`, or undefined when invalid. */
export function decodeSegwit(hrp: string, address: string): { version: number; program: number[] } | undefined {
  const decoded = decodeBech32(address);
  if (!decoded || decoded.hrp !== hrp || decoded.data.length < 1) return undefined;
  const [version, ...rest] = decoded.data;
  if (version > 16) return undefined;
  const program = convertBits(rest, 5, 8);
  if (!program || program.length < 2 || program.length > 40) return undefined;
  if (version === 0 && program.length !== 20 && program.length !== 32) return undefined;
  // BIP-350: version 0 keeps bech32, every later version uses bech32m.
  if ((version === 0) !== (decoded.variant === 'bech32')) return undefined;
  return { version, program };
}

/**
 * Address check by the chain type of the price service's reference chains (`price.chains`),
 * which adds Cosmos (bech32 `cosmos1…`, 20 or 32 bytes) and Move chains (Sui, Aptos: `0x` and up
 * to 64 hex digits, stored lowercase and zero-padded to 32 bytes) to the four families.
 */
export function canonicalAddressForChainType(chainType: string, raw: string): AddressCheck {
  switch (chainType) {
    case 'evm':
    case 'svm':
    case 'tvm':
    case 'utxo':
      return canonicalAddress(chainType, raw);
    case 'cosmos': {
      const a = raw.trim();
      const decoded = decodeBech32(a);
      if (!decoded || decoded.hrp !== 'cosmos' || decoded.variant !== 'bech32') return bad('is not a valid bech32 cosmos1… address');
      const bytes = convertBits(decoded.data, 5, 8);
      return bytes && (bytes.length === 20 || bytes.length === 32) ? ok(a.toLowerCase()) : bad('does not decode to a 20- or 32-byte account');
    }
    case 'move': {
      const a = raw.trim();
      if (!/^0x[0-9a-fA-F]{1,64}$/.test(a)) return bad('must be 0x followed by up to 64 hex digits');
      return ok('0x' + a.slice(2).toLowerCase().padStart(64, '0'));
    }
    default:
      return bad('belongs to an unsupported chain type');
  }
}
