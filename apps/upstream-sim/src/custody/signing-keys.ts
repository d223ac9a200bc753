import { ed25519 } from '@noble/curves/ed25519';
import { secp256k1 } from '@noble/curves/secp256k1';
import { hmac } from '@noble/hashes/hmac';
import { sha512 } from '@noble/hashes/sha2';
import { keccak_256 } from '@noble/hashes/sha3';
import { HDKey } from '@scure/bip32';
import { mnemonicToSeedSync, validateMnemonic } from '@scure/bip39';
import { wordlist } from '@scure/bip39/wordlists/english';
import { networks, payments } from 'bitcoinjs-lib';
import { base58Encode, tronHexToBase58 } from '@chainpipe/chains';

/**
 * The keys of the signing service's stand-in, derived from its mnemonic by the published paths,
 * written here rather than taken from `@chainpipe/custody` (the code under test derives the same
 * addresses from the account xpubs on its side; signer-service.int.test.ts checks the two agree):
 * BIP44 m/44'/60'/0'/0/i (EVM), BIP84 m/84'/0'/0'/0/i (Bitcoin P2WPKH), BIP44 m/44'/195'/0'/0/i
 * (Tron), and SLIP-0010 ed25519 m/44'/501'/i'/0' (Solana: the path Phantom and Solflare give
 * their i-th account).
 */
export const SECP256K1_FAMILIES = ['evm', 'utxo', 'tvm'] as const;
export type Secp256k1Family = (typeof SECP256K1_FAMILIES)[number];
export type ServiceFamily = Secp256k1Family | 'svm';

const ACCOUNT_PATHS: Readonly<Record<Secp256k1Family, string>> = { evm: "m/44'/60'/0'", utxo: "m/84'/0'/0'", tvm: "m/44'/195'/0'" };
/** BIP32's largest non-hardened index. */
const MAX_INDEX = 0x7fffffff;
const HARDENED = 0x80000000;

export function isSecp256k1Family(family: string): family is Secp256k1Family {
  return (SECP256K1_FAMILIES as readonly string[]).includes(family);
}

export function isServiceFamily(family: string): family is ServiceFamily {
  return family === 'svm' || isSecp256k1Family(family);
}

/** SLIP-0010 ed25519 private derivation along hardened steps. */
function slip10Key(seed: Uint8Array, steps: readonly number[]): Uint8Array {
  let I = hmac(sha512, new TextEncoder().encode('ed25519 seed'), seed);
  for (const step of steps) {
    const data = new Uint8Array(37);
    data.set(I.subarray(0, 32), 1);
    new DataView(data.buffer).setUint32(33, step + HARDENED, false);
    I = hmac(sha512, I.subarray(32), data);
  }
  return I.slice(0, 32);
}

/** The address of a compressed secp256k1 public key in each chain's stored form. */
function addressOf(family: Secp256k1Family, publicKey: Uint8Array): string {
  if (family === 'utxo') return payments.p2wpkh({ pubkey: publicKey, network: networks.bitcoin }).address!;
  const uncompressed = secp256k1.ProjectivePoint.fromHex(publicKey).toRawBytes(false);
  const account = Buffer.from(keccak_256(uncompressed.subarray(1))).subarray(12).toString('hex');
  return family === 'evm' ? `0x${account}` : tronHexToBase58(`41${account}`)!;
}

function checkIndex(index: number): void {
  if (!Number.isInteger(index) || index < 0 || index > MAX_INDEX) throw new Error(`deposit index ${index} is outside 0…${MAX_INDEX}`);
}

export class SigningServiceKeys {
  private readonly seed: Uint8Array;
  private readonly root: HDKey;

  /** `mnemonic`: BIP39 words (English list, no passphrase), separated by spaces or hyphens (the env-file form). */
  constructor(mnemonic: string) {
    const words = mnemonic.trim().split(/[\s-]+/).join(' ');
    if (!validateMnemonic(words, wordlist)) throw new Error('SIM_SIGNER_MNEMONIC is not a valid BIP39 mnemonic');
    this.seed = mnemonicToSeedSync(words);
    this.root = HDKey.fromMasterSeed(this.seed);
  }

  private secpKey(family: Secp256k1Family, index: number): HDKey {
    checkIndex(index);
    return this.root.derive(`${ACCOUNT_PATHS[family]}/0/${index}`);
  }

  private solanaKey(index: number): Uint8Array {
    checkIndex(index);
    return slip10Key(this.seed, [44, 501, index, 0]);
  }

  addressAt(family: ServiceFamily, index: number): string {
    if (family === 'svm') return base58Encode(ed25519.getPublicKey(this.solanaKey(index)));
    return addressOf(family, this.secpKey(family, index).publicKey!);
  }

  /** Low-S secp256k1 signatures (RFC 6979) of 32-byte hex digests by the key of `index`, which must own `address`. */
  sign(family: Secp256k1Family, index: number, address: string, digests: readonly string[]): { r: string; s: string; recovery: 0 | 1 }[] {
    for (const d of digests) if (typeof d !== 'string' || !/^[0-9a-f]{64}$/.test(d)) throw new Error('a digest is not 32 bytes of lower-case hex');
    const key = this.secpKey(family, index);
    if (addressOf(family, key.publicKey!) !== address) throw new Error(`the key of ${family} index ${index} does not own ${address}`);
    return digests.map((digest) => {
      const sig = secp256k1.sign(digest, key.privateKey!, { lowS: true });
      return { r: sig.r.toString(16).padStart(64, '0'), s: sig.s.toString(16).padStart(64, '0'), recovery: sig.recovery as 0 | 1 };
    });
  }

  /** The ed25519 signature of a Solana message by the key of `index`, which must own `address`. */
  signMessage(index: number, address: string, message: Uint8Array): Uint8Array {
    const key = this.solanaKey(index);
    if (base58Encode(ed25519.getPublicKey(key)) !== address) throw new Error(`the key of svm index ${index} does not own ${address}`);
    return ed25519.sign(message, key);
  }
}
