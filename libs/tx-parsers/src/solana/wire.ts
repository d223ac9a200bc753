import { base58Decode, base58Encode } from '@chainpipe/chains';
import { getCompiledTransactionMessageDecoder } from '@solana/transaction-messages';
import { getTransactionDecoder } from '@solana/transactions';
import type { JsonObject } from './json';

/**
 * Binary transactions (`encoding: "base64"` / `"base58"` of getTransaction and getBlock, and the
 * deprecated `"binary"`: a bare base58 string) → the `transaction` object of the `json` encoding,
 * so one parser path reads every encoding. The node answers `transaction: [<wire bytes>, "base64"]`
 * and leaves `meta` in JSON (the non-parsed form: compiled inner instructions, `loadedAddresses`),
 * which is exactly what the `json` encoding pairs with this shape.
 *
 * The wire format (signatures, then the legacy or versioned message) is decoded with Solana's own
 * codecs (@solana/transactions, @solana/transaction-messages), not by hand.
 */

export type WireEncoding = 'base64' | 'base58';

export interface DecodedWireTransaction {
  /** `{signatures, message}` as the `json` encoding writes it. */
  transaction: JsonObject;
  /** From the message prefix: 'legacy', or the version number (0 for v0). */
  version: 'legacy' | number;
}

/** Longer than any transaction a node accepts (1232-byte packets); refuses garbage early. */
const MAX_WIRE_CHARS = 4096;

const transactionDecoder = getTransactionDecoder();
const messageDecoder = getCompiledTransactionMessageDecoder();

function wireBytes(data: string, encoding: WireEncoding): Uint8Array {
  if (data.length === 0 || data.length > MAX_WIRE_CHARS) throw new Error(`${encoding} transaction of ${data.length} characters`);
  if (encoding === 'base64') {
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(data) || data.length % 4 !== 0) throw new Error('transaction is not valid base64');
    return Buffer.from(data, 'base64');
  }
  const decoded = base58Decode(data);
  if (!decoded) throw new Error('transaction is not valid base58');
  return decoded;
}

/**
 * Decodes one binary transaction. Throws (with a short reason) when the bytes are not a
 * transaction: a signature count that does not match the header, trailing or missing bytes.
 */
export function decodeWireTransaction(data: string, encoding: WireEncoding): DecodedWireTransaction {
  const bytes = wireBytes(data, encoding);
  // The message takes every byte after the signatures; it must end exactly there.
  const tx = transactionDecoder.decode(bytes);
  const [message, end] = messageDecoder.read(tx.messageBytes, 0);
  if (end !== tx.messageBytes.length) throw new Error(`${tx.messageBytes.length - end} bytes after the transaction message`);
  // v1 messages (instruction headers and payloads instead of compiled instructions) are not read yet.
  if (message.version !== 'legacy' && message.version !== 0) throw new Error(`transaction version ${message.version} is not supported`);
  const accounts = message.staticAccounts;
  const signers = accounts.slice(0, message.header.numSignerAccounts);
  const signatures = signers.map((address) => {
    const sig = tx.signatures[address];
    // A confirmed transaction carries every signature; an all-zero one decodes as null.
    return sig ? base58Encode(sig) : base58Encode(new Uint8Array(64));
  });
  const json: JsonObject = {
    accountKeys: [...accounts],
    header: {
      numReadonlySignedAccounts: message.header.numReadonlySignerAccounts,
      numReadonlyUnsignedAccounts: message.header.numReadonlyNonSignerAccounts,
      numRequiredSignatures: message.header.numSignerAccounts,
    },
    instructions: message.instructions.map((ix) => ({
      accounts: [...(ix.accountIndices ?? [])],
      data: base58Encode(Uint8Array.from(ix.data ?? [])),
      programIdIndex: ix.programAddressIndex,
    })),
    recentBlockhash: message.lifetimeToken,
  };
  if (message.version === 0) {
    json.addressTableLookups = (message.addressTableLookups ?? []).map((l) => ({
      accountKey: l.lookupTableAddress,
      readonlyIndexes: [...l.readonlyIndexes],
      writableIndexes: [...l.writableIndexes],
    }));
  }
  return { transaction: { message: json, signatures }, version: message.version };
}

/** `[data, "base64"|"base58"]`, or a bare base58 string (`encoding: "binary"`); null for anything else. */
export function wireForm(transaction: unknown): { data: string; encoding: WireEncoding } | null {
  if (typeof transaction === 'string') return { data: transaction, encoding: 'base58' };
  if (Array.isArray(transaction) && transaction.length === 2 && typeof transaction[0] === 'string') {
    const encoding = transaction[1];
    if (encoding === 'base64' || encoding === 'base58') return { data: transaction[0], encoding };
  }
  return null;
}
