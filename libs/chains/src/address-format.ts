import { keccak_256 } from '@noble/hashes/sha3';
import { bech32, bech32m } from '@scure/base';
import { base58CheckDecode, base58Decode, isTronBase58, tronHexToBase58 } from './address';
import type { ChainFamily } from './catalog';

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

/**
 * Whether a mixed-case EVM address carries a valid EIP-55 checksum: a hex letter is upper case
 * exactly when the matching nibble of keccak-256(lowercase address) is 8 or more. An address in
 * one case only carries no checksum and passes.
 */
export function eip55Valid(address: string): boolean {
  const hex = address.slice(2);
  if (hex === hex.toLowerCase() || hex === hex.toUpperCase()) return true;
  const hash = Buffer.from(keccak_256(hex.toLowerCase())).toString('hex');
  for (let i = 0; i < 40; i++) {
    const c = hex[i];
    if (c >= '0' && c <= '9') continue;
    if ((parseInt(hash[i], 16) >= 8) !== (c === c.toUpperCase())) return false;
  }
  return true;
}

function evmAddress(a: string): AddressCheck {
  if (!/^0x[0-9a-fA-F]{40}$/.test(a)) return bad('must be 0x followed by 40 hex digits');
  // A mistyped mixed-case address is refused, as wallets refuse it (EIP-55).
  if (!eip55Valid(a)) return bad('has a wrong EIP-55 checksum (mixed case)');
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

/** Bitcoin mainnet: P2PKH `1…`, P2SH `3…` (Base58Check) and segwit `bc1…` (bech32, bech32m). */
function bitcoinAddress(a: string): AddressCheck {
  if (/^bc1/i.test(a)) {
    const program = decodeSegwit('bc', a);
    return program ? ok(a.toLowerCase()) : bad('is not a valid bech32/bech32m mainnet segwit address');
  }
  if (!/^[13][1-9A-HJ-NP-Za-km-z]{24,34}$/.test(a)) return bad('must be a mainnet address starting with 1, 3 or bc1');
  const raw = base58Decode(a);
  if (!raw || raw.length !== 25) return bad('does not decode to a 25-byte Base58Check address');
  const payload = base58CheckDecode(a);
  if (!payload) return bad('has a bad Base58Check checksum');
  if (payload[0] !== 0x00 && payload[0] !== 0x05) return bad('has a version byte other than P2PKH or P2SH mainnet');
  return ok(a);
}

// --- bech32 / bech32m (BIP-173, BIP-350), decoded by @scure/base ---------------------------

type Bech32Decoded = { hrp: string; words: number[]; variant: 'bech32' | 'bech32m' };

/** Either checksum variant; undefined when the text is neither (or mixes cases, or exceeds 90 chars). */
function decodeBech32(text: string): Bech32Decoded | undefined {
  for (const [variant, codec] of [['bech32', bech32], ['bech32m', bech32m]] as const) {
    try {
      const d = codec.decode(text as `${string}1${string}`, 90);
      return { hrp: d.prefix, words: [...d.words], variant };
    } catch {
      // not this variant
    }
  }
  return undefined;
}

/** 5-bit words → bytes, refusing non-zero padding (BIP-173). */
function wordsToBytes(words: number[]): number[] | undefined {
  try {
    return [...bech32.fromWords(words)];
  } catch {
    return undefined;
  }
}

/** The witness version and program of a segwit address of `hrp`, or undefined when invalid. */
export function decodeSegwit(hrp: string, address: string): { version: number; program: number[] } | undefined {
  const decoded = decodeBech32(address);
  if (!decoded || decoded.hrp !== hrp || decoded.words.length < 1) return undefined;
  const [version, ...rest] = decoded.words;
  if (version > 16) return undefined;
  const program = wordsToBytes(rest);
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
      const bytes = wordsToBytes(decoded.words);
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
