import { secp256k1 } from '@noble/curves/secp256k1';
import type { HDKey } from '@scure/bip32';
import { upstreamJson, upstreamUrl } from '@chainpipe/upstreams';
import { ACCOUNT_PATHS, MAX_DEPOSIT_INDEX, addressOfPublicKey, isDerivableFamily, type DerivableFamily } from './deposit-keys';
import { rootOfMnemonic } from './mnemonic';

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
 * Signs for the platform's deposit addresses. The gateway never holds one (it derives addresses
 * from public keys only); the part that moves funds (forwards, refunds, fee sweeps) does. Every
 * request names the address it expects, so a key that does not own it (another xpub configured
 * than the signer's) never signs a transaction that would fail or spend elsewhere.
 */
export interface Signer {
  /** The address of a deposit index as the signer's key sees it. */
  addressAt(family: DerivableFamily, index: number, signal?: AbortSignal): Promise<string>;
  /** One signature per digest, in order, by the key of `index`. */
  sign(req: SignRequest, signal?: AbortSignal): Promise<DigestSignature[]>;
}

const DIGEST = /^[0-9a-f]{64}$/;

function checkRequest(family: string, index: number, digests: readonly string[] = []): void {
  if (!isDerivableFamily(family)) throw new Error(`the ${family} family has no deposit key`);
  if (!Number.isInteger(index) || index < 0 || index > MAX_DEPOSIT_INDEX) throw new Error(`deposit index ${index} is outside 0…${MAX_DEPOSIT_INDEX}`);
  for (const d of digests) if (!DIGEST.test(d)) throw new Error('a digest is not 32 bytes of lower-case hex');
}

/**
 * The development signer: every key from one BIP39 mnemonic (`DEV_SIGNER_MNEMONIC`, which
 * `make up` generates and keeps in .run/dev.env), at the same paths as the configured account
 * keys. For development stacks and tests only; production uses a signing service or KMS.
 */
export class MnemonicSigner implements Signer {
  private readonly root: HDKey;

  constructor(mnemonic: string) {
    this.root = rootOfMnemonic(mnemonic);
  }

  private keyAt(family: DerivableFamily, index: number): HDKey {
    return this.root.derive(`${ACCOUNT_PATHS[family]}/0/${index}`);
  }

  async addressAt(family: DerivableFamily, index: number): Promise<string> {
    checkRequest(family, index);
    return addressOfPublicKey(family, this.keyAt(family, index).publicKey!);
  }

  async sign(req: SignRequest): Promise<DigestSignature[]> {
    checkRequest(req.family, req.index, req.digests);
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
}

/**
 * The client of an external signing service (or a KMS front) holding the platform's keys. Its
 * contract (docs/decisions.md#d111):
 *
 * - `GET {base}/v1/addresses/{family}/{index}` → `{"address": "…"}`
 * - `POST {base}/v1/sign` `{"family", "index", "address", "digests": ["<64 hex>", …]}` →
 *   `{"signatures": [{"r": "<64 hex>", "s": "<64 hex>", "recovery": 0|1}, …]}`, one per digest
 *   (the service refuses, non-2xx, when its key of `index` does not own `address`)
 *
 * with `Authorization: Bearer <token>`; any non-2xx is a refusal. Every signature is checked
 * here as well: the public key it recovers from its digest must own `address`, so a wrong or
 * confused service never gets a transaction broadcast.
 */
export class HttpSigner implements Signer {
  constructor(private readonly opts: { baseUrl: string; token: string; timeoutMs: number }) {}

  private call(path: string, body: unknown | undefined, signal?: AbortSignal): Promise<unknown> {
    return upstreamJson({
      url: upstreamUrl(this.opts.baseUrl, path),
      method: body === undefined ? 'GET' : 'POST',
      headers: { authorization: `Bearer ${this.opts.token}` },
      json: body,
      timeoutMs: this.opts.timeoutMs,
      signal,
    });
  }

  async addressAt(family: DerivableFamily, index: number, signal?: AbortSignal): Promise<string> {
    checkRequest(family, index);
    const answer = (await this.call(`/v1/addresses/${family}/${index}`, undefined, signal)) as { address?: unknown };
    if (typeof answer?.address !== 'string' || answer.address === '') throw new Error('the signing service answered no address');
    return answer.address;
  }

  async sign(req: SignRequest, signal?: AbortSignal): Promise<DigestSignature[]> {
    checkRequest(req.family, req.index, req.digests);
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
