import { secp256k1 } from '@noble/curves/secp256k1';
import { keccak_256 } from '@noble/hashes/sha3';
import { HDKey } from '@scure/bip32';
import { payments, networks } from 'bitcoinjs-lib';
import { canonicalAddress, tronHexToBase58, type ChainFamily } from '@chainpipe/chains';

/** Chain families whose deposit addresses derive from a public key (BIP32 non-hardened). */
export const DERIVABLE_FAMILIES = ['evm', 'utxo', 'tvm'] as const;
export type DerivableFamily = (typeof DERIVABLE_FAMILIES)[number];

/**
 * The account of each family's extended key (BIP44 / BIP84): the configured xpub is the public
 * key of this path, and deposit index `i` is its child `0/i` (the external chain). The signer
 * derives the private key of the same path, so both sides agree on every address.
 */
export const ACCOUNT_PATHS: Readonly<Record<DerivableFamily, string>> = {
  evm: "m/44'/60'/0'",
  utxo: "m/84'/0'/0'",
  tvm: "m/44'/195'/0'",
};

/** Largest index BIP32 derives without hardening (2^31 − 1). */
export const MAX_DEPOSIT_INDEX = 0x7fffffff;

/**
 * The gas station's key: the last index of each family's account (`0/2147483647`), reserved.
 * Orders never take it (the order sequence stops at 2^31 − 2 and `agg.orders` refuses it), and
 * the signing service, which holds the account, signs for it as for any index: no key of its
 * own to provision. Its address derives from the same xpub, so it can be shown watch-only.
 */
export const GAS_STATION_INDEX = MAX_DEPOSIT_INDEX;

export function isDerivableFamily(family: string): family is DerivableFamily {
  return (DERIVABLE_FAMILIES as readonly string[]).includes(family);
}

/**
 * A configured extended public key: an `xpub…` (mainnet BIP32 version), public only. An
 * extended private key is refused: the deposit side never holds one.
 */
export function parseAccountXpub(text: string): HDKey {
  const trimmed = text.trim();
  if (!trimmed.startsWith('xpub')) throw new Error('is not an extended public key (xpub…)');
  let key: HDKey;
  try {
    key = HDKey.fromExtendedKey(trimmed);
  } catch (err) {
    throw new Error(`is not a valid extended public key: ${(err as Error).message}`);
  }
  if (key.privateKey) throw new Error('holds a private key');
  return key;
}

/** The address of a compressed secp256k1 public key in `family`, in the stored (canonical) form. */
export function addressOfPublicKey(family: DerivableFamily, publicKey: Uint8Array): string {
  let address: string | undefined;
  switch (family) {
    case 'utxo':
      // native SegWit (P2WPKH), the form of BIP84 accounts
      address = payments.p2wpkh({ pubkey: publicKey, network: networks.bitcoin }).address;
      break;
    case 'evm':
    case 'tvm': {
      const uncompressed = secp256k1.ProjectivePoint.fromHex(publicKey).toRawBytes(false);
      const account = Buffer.from(keccak_256(uncompressed.subarray(1))).subarray(12).toString('hex');
      address = family === 'evm' ? `0x${account}` : tronHexToBase58(`41${account}`);
      break;
    }
  }
  const checked = address ? canonicalAddress(family as ChainFamily, address) : undefined;
  if (!checked?.ok) throw new Error(`no ${family} address for the derived key`);
  return checked.address;
}

/** The public key of deposit index `index` under an account key (`0/index`). */
export function depositPublicKey(account: HDKey, index: number): Uint8Array {
  if (!Number.isInteger(index) || index < 0 || index > MAX_DEPOSIT_INDEX) throw new Error(`deposit index ${index} is outside 0…${MAX_DEPOSIT_INDEX}`);
  const child = account.deriveChild(0).deriveChild(index);
  if (!child.publicKey) throw new Error(`no public key at deposit index ${index}`);
  return child.publicKey;
}

/** Thrown for a source family without public derivation (Solana's ed25519 keys derive hardened only). */
export class NoDepositDerivation extends Error {}

/**
 * The platform's deposit addresses, watch-only: one extended public key per chain family, an
 * address per derivation index. Holds no private key.
 */
export class DepositAddresses {
  private readonly accounts: ReadonlyMap<DerivableFamily, HDKey>;

  constructor(xpubs: Readonly<Record<DerivableFamily, string>>) {
    this.accounts = new Map(
      DERIVABLE_FAMILIES.map((family) => {
        try {
          return [family, parseAccountXpub(xpubs[family])] as const;
        } catch (err) {
          throw new Error(`deposit key of ${family}: ${(err as Error).message}`);
        }
      }),
    );
  }

  /** Whether orders paying on this family can get a deposit address. */
  supports(family: string): family is DerivableFamily {
    return isDerivableFamily(family);
  }

  addressAt(family: string, index: number): string {
    if (!isDerivableFamily(family)) throw new NoDepositDerivation(`the ${family} family has no public key derivation`);
    return addressOfPublicKey(family, depositPublicKey(this.accounts.get(family)!, index));
  }
}
