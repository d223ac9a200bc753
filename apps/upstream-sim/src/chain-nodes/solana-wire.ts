import { createPublicKey, verify } from 'node:crypto';
import { base58Decode, base58Encode } from '@chainpipe/chains';
import { getCompiledTransactionMessageEncoder, type CompiledTransactionMessage } from '@solana/transaction-messages';
import { getTransactionEncoder, type Transaction } from '@solana/transactions';
import { isObject, type JsonObject } from './json';

/**
 * The wire bytes of a `json`-encoded transaction, as a node sends them for `encoding: "base64"` /
 * `"base58"`: signatures, then the legacy or v0 message, serialized with Solana's own codecs.
 * `jsonParsed` fixtures cannot be turned back into bytes (parsed instructions lose their data),
 * so only `json` ones are. Null when the fixture is not a readable `json` transaction or the
 * result is not what its signers signed (every signature must verify over the message bytes), so
 * the simulator never serves bytes the real node would not.
 */
export function solanaWireBytes(tx: JsonObject): Uint8Array | null {
  try {
    const body = tx.transaction;
    if (!isObject(body) || !isObject(body.message) || !Array.isArray(body.signatures)) return null;
    const m = body.message;
    const h = m.header as JsonObject;
    const keys = m.accountKeys as string[];
    if (!Array.isArray(keys) || keys.some((k) => typeof k !== 'string')) return null; // jsonParsed: objects
    const version = tx.version === undefined || tx.version === 'legacy' ? 'legacy' : tx.version;
    const common = {
      header: {
        numSignerAccounts: h.numRequiredSignatures as number,
        numReadonlySignerAccounts: h.numReadonlySignedAccounts as number,
        numReadonlyNonSignerAccounts: h.numReadonlyUnsignedAccounts as number,
      },
      staticAccounts: keys,
      lifetimeToken: m.recentBlockhash as string,
      instructions: (m.instructions as JsonObject[]).map((ix) => ({
        programAddressIndex: ix.programIdIndex as number,
        accountIndices: ix.accounts as number[],
        data: base58Decode(ix.data as string)!,
      })),
    };
    let compiled: CompiledTransactionMessage & { lifetimeToken: string };
    if (version === 'legacy') compiled = { ...common, version } as never;
    else if (version === 0) {
      const lookups = (m.addressTableLookups ?? []) as JsonObject[];
      compiled = {
        ...common,
        version,
        addressTableLookups: lookups.map((l) => ({ lookupTableAddress: l.accountKey, writableIndexes: l.writableIndexes, readonlyIndexes: l.readonlyIndexes })),
      } as never;
    } else return null;
    const messageBytes = getCompiledTransactionMessageEncoder().encode(compiled);
    const sigs = (body.signatures as string[]).map((s) => base58Decode(s));
    const signatures: Record<string, Uint8Array> = {};
    for (const [i, sig] of sigs.entries()) {
      if (!sig || sig.length !== 64 || !verifies(Uint8Array.from(messageBytes), keys[i], sig)) return null;
      signatures[keys[i]] = sig;
    }
    return getTransactionEncoder().encode({ messageBytes, signatures } as unknown as Transaction) as Uint8Array;
  } catch {
    return null;
  }
}

function verifies(message: Uint8Array, signer: string, signature: Uint8Array): boolean {
  const raw = base58Decode(signer);
  if (!raw || raw.length !== 32) return false;
  // Ed25519 SubjectPublicKeyInfo prefix (RFC 8410) in front of the 32-byte key.
  const key = createPublicKey({ key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), raw]), format: 'der', type: 'spki' });
  return verify(null, message, key, signature);
}

export function wireText(bytes: Uint8Array, encoding: 'base64' | 'base58'): string {
  return encoding === 'base64' ? Buffer.from(bytes).toString('base64') : base58Encode(bytes);
}
