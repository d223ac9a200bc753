import { ed25519 } from '@noble/curves/ed25519';
import { secp256k1 } from '@noble/curves/secp256k1';
import { HDKey } from '@scure/bip32';
import { canonicalAddress } from '@chainpipe/chains';
import { upstreamJson, upstreamUrl } from '@chainpipe/upstreams';
import { ACCOUNT_PATHS, DERIVABLE_FAMILIES, MAX_DEPOSIT_INDEX, addressOfPublicKey, type DerivableFamily } from './deposit-keys';
import { seedOfMnemonic } from './mnemonic';
import { slip10Derive, solanaAddressOf, solanaDepositPath, solanaPublicKeyOf, verifiesSolanaSignature } from './solana-keys';

/**
 * Families the signer holds deposit keys of: the derivable ones (the gateway derives their
 * addresses from public keys) and Solana (`svm`: ed25519 derives hardened only, so only the
 * signer can find an address; the gateway asks it, `addressAt`).
 */
export const KEY_FAMILIES = [...DERIVABLE_FAMILIES, 'svm'] as const;
export type KeyFamily = (typeof KEY_FAMILIES)[number];

export function isKeyFamily(family: string): family is KeyFamily {
  return (KEY_FAMILIES as readonly string[]).includes(family);
}

/**
 * What a built transaction asks of the key of one deposit index: its 32-byte digests (hex), the
 * values the chain's signature commits to: the keccak-256 of an EVM transaction's unsigned
 * encoding, a Tron transaction's txID, the sighash of each Bitcoin input the address spends.
 * The builder (executor, refunds) computes them with the chain's libraries and puts the
 * signatures back into the transaction.
 */
export interface SignRequest {
  family: DerivableFamily;
  index: number;
  /** The order's stored deposit address of `index`: a signer whose key of `index` has another address refuses. */
  address: string;
  digests: string[];
}

/** A secp256k1 signature in low-S form: `r`, `s` as 32-byte hex, `recovery` the public key's parity bit (EVM `v` − 27, Tron's last byte). */
export interface DigestSignature {
  r: string;
  s: string;
  recovery: 0 | 1;
}

/**
 * What a Solana transaction asks of the key of one deposit index: the signature over its message
 * bytes (ed25519 signs the message itself, there is no digest to hand over).
 */
export interface MessageSignRequest {
  family: 'svm';
  index: number;
  /** The order's stored deposit address of `index`: a signer whose key of `index` has another address refuses. */
  address: string;
  message: Uint8Array;
}

/**
 * Signs for the platform's deposit addresses. The gateway never holds one (it derives addresses
 * from public keys, and asks the signing service for Solana's); the part that moves funds
 * (forwards, refunds, fee sweeps) does. Every
 * request names the address it expects, so a key that does not own it (another xpub configured
 * than the signer's) never signs a transaction that would fail or spend elsewhere.
 */
export interface Signer {
  /** The address of a deposit index as the signer's key sees it (for `svm`, the only way to learn it). */
  addressAt(family: KeyFamily, index: number, signal?: AbortSignal): Promise<string>;
  /** One signature per digest, in order, by the (secp256k1) key of `index`. */
  sign(req: SignRequest, signal?: AbortSignal): Promise<DigestSignature[]>;
  /** The 64-byte ed25519 signature of the message by the key of `index` (Solana). */
  signMessage(req: MessageSignRequest, signal?: AbortSignal): Promise<Uint8Array>;
}

const DIGEST = /^[0-9a-f]{64}$/;

function checkRequest(family: string, index: number, digests: readonly string[] = []): void {
  if (!isKeyFamily(family)) throw new Error(`the ${family} family has no deposit key`);
  if (!Number.isInteger(index) || index < 0 || index > MAX_DEPOSIT_INDEX) throw new Error(`deposit index ${index} is outside 0…${MAX_DEPOSIT_INDEX}`);
  for (const d of digests) if (!DIGEST.test(d)) throw new Error('a digest is not 32 bytes of lower-case hex');
}

/** secp256k1 families sign digests, Solana's ed25519 keys sign messages: a request of the other kind is refused. */
function checkKind(family: string, kind: 'digests' | 'message'): void {
  const signsMessages = family === 'svm';
  if (kind === 'digests' && signsMessages) throw new Error(`the ${family} family signs messages, not digests`);
  if (kind === 'message' && !signsMessages) throw new Error(`the ${family} family signs digests, not messages`);
}

/**
 * The development signer: every key from one BIP39 mnemonic (`DEV_SIGNER_MNEMONIC`, which
 * `make up` generates and keeps in .run/dev.env), at the same paths as the configured account
 * keys. For development stacks and tests only; production uses a signing service or KMS.
 */
export class MnemonicSigner implements Signer {
  private readonly seed: Uint8Array;
  private readonly root: HDKey;

  constructor(mnemonic: string) {
    this.seed = seedOfMnemonic(mnemonic);
    this.root = HDKey.fromMasterSeed(this.seed);
  }

  private keyAt(family: DerivableFamily, index: number): HDKey {
    return this.root.derive(`${ACCOUNT_PATHS[family]}/0/${index}`);
  }

  /** The ed25519 private key of Solana deposit index `index` (SLIP-0010, m/44'/501'/index'/0'). */
  private solanaKeyAt(index: number): Uint8Array {
    return slip10Derive(this.seed, solanaDepositPath(index)).key;
  }

  async addressAt(family: KeyFamily, index: number): Promise<string> {
    checkRequest(family, index);
    if (family === 'svm') return solanaAddressOf(solanaPublicKeyOf(this.solanaKeyAt(index)));
    return addressOfPublicKey(family, this.keyAt(family, index).publicKey!);
  }

  async signMessage(req: MessageSignRequest): Promise<Uint8Array> {
    checkRequest(req.family, req.index);
    checkKind(req.family, 'message');
    const key = this.solanaKeyAt(req.index);
    if (solanaAddressOf(solanaPublicKeyOf(key)) !== req.address) throw new Error(`the key of svm index ${req.index} does not own ${req.address}`);
    return ed25519.sign(req.message, key);
  }

  async sign(req: SignRequest): Promise<DigestSignature[]> {
    checkRequest(req.family, req.index, req.digests);
    checkKind(req.family, 'digests');
    const owner = this.keyAt(req.family, req.index);
    if (addressOfPublicKey(req.family, owner.publicKey!) !== req.address) throw new Error(`the key of ${req.family} index ${req.index} does not own ${req.address}`);
    return signDigests(owner.privateKey!, req.digests);
  }
}

/** Low-S secp256k1 signatures of 32-byte digests by one private key. */
function signDigests(key: Uint8Array, digests: readonly string[]): DigestSignature[] {
  return digests.map((digest) => {
    const sig = secp256k1.sign(digest, key, { lowS: true });
    return { r: sig.r.toString(16).padStart(64, '0'), s: sig.s.toString(16).padStart(64, '0'), recovery: sig.recovery as 0 | 1 };
  });
}

/**
 * A Signer of one key and its address in one family: a wallet outside the platform's deposit keys
 * (the test kit's payer, a provider's payin address in the simulator). It signs for its own
 * address only, whatever the index.
 */
export class SingleKeySigner implements Signer {
  readonly address: string;

  constructor(
    private readonly family: DerivableFamily,
    private readonly privateKey: Uint8Array,
  ) {
    this.address = addressOfPublicKey(family, secp256k1.getPublicKey(privateKey, true));
  }

  async addressAt(family: DerivableFamily): Promise<string> {
    if (family !== this.family) throw new Error(`this key signs for ${this.family}, not ${family}`);
    return this.address;
  }

  async sign(req: SignRequest): Promise<DigestSignature[]> {
    checkRequest(req.family, req.index, req.digests);
    if (req.family !== this.family || req.address !== this.address) throw new Error(`this key does not own ${req.address}`);
    return signDigests(this.privateKey, req.digests);
  }

  async signMessage(req: MessageSignRequest): Promise<Uint8Array> {
    throw new Error(`this ${this.family} key signs digests, not the message of ${req.address}`);
  }
}

/**
 * The address look-ups of the signing service alone (`GET /v1/addresses/{family}/{index}`, its
 * contract below): all the gateway may ask of it, so the gateway can learn Solana deposit
 * addresses (whose keys derive hardened only) without any way to have something signed.
 */
export class SigningServiceAddresses {
  constructor(protected readonly opts: { baseUrl: string; token: string; timeoutMs: number }) {}

  protected call(path: string, body: unknown | undefined, signal?: AbortSignal): Promise<unknown> {
    return upstreamJson({
      url: upstreamUrl(this.opts.baseUrl, path),
      method: body === undefined ? 'GET' : 'POST',
      headers: { authorization: `Bearer ${this.opts.token}` },
      json: body,
      timeoutMs: this.opts.timeoutMs,
      signal,
    });
  }

  /** The address of a deposit index, checked as an address of the family (canonical form). */
  async addressAt(family: KeyFamily, index: number, signal?: AbortSignal): Promise<string> {
    checkRequest(family, index);
    const answer = (await this.call(`/v1/addresses/${family}/${index}`, undefined, signal)) as { address?: unknown };
    if (typeof answer?.address !== 'string' || answer.address === '') throw new Error('the signing service answered no address');
    const checked = canonicalAddress(family, answer.address);
    if (!checked.ok) throw new Error(`the signing service answered ${answer.address}, not a ${family} address`);
    return checked.address;
  }
}

/**
 * The client of an external signing service (or a KMS front) holding the platform's keys. Its
 * contract (docs/decisions.md#d111):
 *
 * - `GET {base}/v1/addresses/{family}/{index}` → `{"address": "…"}` (for `svm` the service
 *   creates and keeps the ed25519 key of the index: the only source of a Solana deposit address)
 * - `POST {base}/v1/sign` `{"family", "index", "address", "digests": ["<64 hex>", …]}` →
 *   `{"signatures": [{"r": "<64 hex>", "s": "<64 hex>", "recovery": 0|1}, …]}`, one per digest
 *   (the service refuses, non-2xx, when its key of `index` does not own `address`)
 * - for `svm`: `POST {base}/v1/sign` `{"family": "svm", "index", "address", "message": "<base64>"}`
 *   → `{"signature": "<base64 of 64 bytes>"}`, the ed25519 signature of the message bytes
 *
 * with `Authorization: Bearer <token>`; any non-2xx is a refusal. Every signature is checked
 * here as well: the public key it recovers from its digest (secp256k1), or the address's key it
 * verifies under (ed25519), must own `address`, so a wrong or confused service never gets a
 * transaction broadcast.
 */
export class HttpSigner extends SigningServiceAddresses implements Signer {
  async signMessage(req: MessageSignRequest, signal?: AbortSignal): Promise<Uint8Array> {
    checkRequest(req.family, req.index);
    checkKind(req.family, 'message');
    const body = { family: req.family, index: req.index, address: req.address, message: Buffer.from(req.message).toString('base64') };
    const answer = (await this.call('/v1/sign', body, signal)) as { signature?: unknown };
    const signature = typeof answer?.signature === 'string' ? Buffer.from(answer.signature, 'base64') : undefined;
    if (!signature || signature.length !== 64) throw new Error('the signing service answered a malformed signature');
    if (!verifiesSolanaSignature(req.address, req.message, signature)) throw new Error('a signature of the signing service is not by the key of the deposit address');
    return new Uint8Array(signature);
  }

  async sign(req: SignRequest, signal?: AbortSignal): Promise<DigestSignature[]> {
    checkRequest(req.family, req.index, req.digests);
    checkKind(req.family, 'digests');
    const answer = (await this.call('/v1/sign', { family: req.family, index: req.index, address: req.address, digests: req.digests }, signal)) as { signatures?: unknown };
    const signatures = answer?.signatures;
    if (!Array.isArray(signatures) || signatures.length !== req.digests.length) throw new Error('the signing service answered another number of signatures than digests');
    return signatures.map((raw, i) => {
      const sig = raw as Partial<DigestSignature>;
      if (typeof sig?.r !== 'string' || !DIGEST.test(sig.r) || typeof sig.s !== 'string' || !DIGEST.test(sig.s) || (sig.recovery !== 0 && sig.recovery !== 1)) {
        throw new Error('the signing service answered a malformed signature');
      }
      const parsed = new secp256k1.Signature(BigInt(`0x${sig.r}`), BigInt(`0x${sig.s}`)).addRecoveryBit(sig.recovery);
      if (parsed.hasHighS()) throw new Error('the signing service answered a high-S signature');
      const signer = parsed.recoverPublicKey(req.digests[i]).toRawBytes(true);
      if (addressOfPublicKey(req.family, signer) !== req.address) throw new Error('a signature of the signing service is not by the key of the deposit address');
      return { r: sig.r, s: sig.s, recovery: sig.recovery };
    });
  }
}

