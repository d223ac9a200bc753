import { ed25519 } from '@noble/curves/ed25519';
import { hmac } from '@noble/hashes/hmac';
import { sha512 } from '@noble/hashes/sha2';
import { base58Decode, base58Encode } from '@chainpipe/chains';

/**
 * SLIP-0010 private derivation on ed25519 (https://github.com/satoshilabs/slips/blob/master/slip-0010.md):
 * ed25519 has no public child derivation, every step is hardened, so only the holder of the seed
 * can find an address. Written here on @noble/hashes' HMAC-SHA512 rather than taken from a
 * library: the maintained one (micro-key-producer's slip10) brings a second major version of the
 * noble packages for these few lines; the published test vectors check it (solana-keys.test.ts).
 */
export interface Slip10Node {
  /** The 32-byte ed25519 private key (seed of the key pair). */
  key: Uint8Array;
  chainCode: Uint8Array;
}

const HARDENED = 0x80000000;

export function slip10Master(seed: Uint8Array): Slip10Node {
  const I = hmac(sha512, new TextEncoder().encode('ed25519 seed'), seed);
  return { key: I.slice(0, 32), chainCode: I.slice(32) };
}

/** The hardened child `index'` (index below 2^31). */
export function slip10Child(parent: Slip10Node, index: number): Slip10Node {
  if (!Number.isInteger(index) || index < 0 || index >= HARDENED) throw new Error(`child index ${index} is outside 0…${HARDENED - 1}`);
  const data = new Uint8Array(37);
  data.set(parent.key, 1); // 0x00 ‖ key ‖ ser32(index + 2^31)
  new DataView(data.buffer).setUint32(33, index + HARDENED, false);
  const I = hmac(sha512, parent.chainCode, data);
  return { key: I.slice(0, 32), chainCode: I.slice(32) };
}

/** A path of hardened steps only (`m/44'/501'/0'/0'`); a step without `'` is refused, SLIP-0010 ed25519 has none. */
export function slip10Derive(seed: Uint8Array, path: string): Slip10Node {
  const parts = path.split('/');
  if (parts[0] !== 'm') throw new Error(`path ${path} does not start at m`);
  let node = slip10Master(seed);
  for (const part of parts.slice(1)) {
    const m = /^(\d+)'$/.exec(part);
    if (!m) throw new Error(`path ${path}: step ${part} is not hardened (ed25519 derives hardened only)`);
    node = slip10Child(node, Number(m[1]));
  }
  return node;
}

/**
 * The path of Solana deposit index `i`: m/44'/501'/i'/0', the path Phantom and Solflare give their
 * i-th account and that `solana-keygen … prompt://?key=i/0` derives (Solana CLI's `key=<account>/<change>`),
 * so a development mnemonic imported into a wallet shows the same addresses.
 */
export function solanaDepositPath(index: number): string {
  return `m/44'/501'/${index}'/0'`;
}

/** A Solana address: the base58 text of the 32-byte ed25519 public key. */
export function solanaAddressOf(publicKey: Uint8Array): string {
  if (publicKey.length !== 32) throw new Error('an ed25519 public key has 32 bytes');
  return base58Encode(publicKey);
}

export function solanaPublicKeyOf(privateKey: Uint8Array): Uint8Array {
  return ed25519.getPublicKey(privateKey);
}

/**
 * Whether `signature` (64 bytes) is the signature of `address`'s key over `message`: ed25519
 * signs the message bytes themselves (a Solana transaction's message), never a digest of them.
 */
export function verifiesSolanaSignature(address: string, message: Uint8Array, signature: Uint8Array): boolean {
  const key = base58Decode(address);
  if (!key || key.length !== 32 || signature.length !== 64) return false;
  try {
    return ed25519.verify(signature, message, key);
  } catch {
    return false;
  }
}
