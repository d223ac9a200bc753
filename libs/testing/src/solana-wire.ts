/**
 * A `json`-encoded Solana transaction (getBlock / getTransaction) as the wire bytes a node sends
 * for `encoding: "base64"` / `"base58"`. Written out by hand from the wire layout, without the
 * codecs the parser and the simulator use, so a test compares two independent readings. Checked:
 * every signature of the transaction must verify (ed25519) over the message bytes written here,
 * which only the exact bytes the signers signed can do; else this throws.
 *
 * Layout: compact-u16 count + 64-byte signatures; the message: a 0x80|version prefix for
 * versioned messages (none for legacy), the 3-byte header, compact array of 32-byte account keys,
 * the 32-byte recent blockhash, compact array of instructions {u8 program index, compact array of
 * u8 account indexes, compact array of data bytes}, and for v0 the compact array of address table
 * lookups {32-byte table, compact writable indexes, compact readonly indexes}.
 */
import { createPublicKey, verify } from 'node:crypto';
import { base58Decode, base58Encode } from '@chainpipe/chains';

type Json = any;

/** Solana's compact-u16 ("shortvec"): 7 bits per byte, low first, high bit = more follows. */
function compactU16(n: number): Buffer {
  const out: number[] = [];
  let v = n;
  for (;;) {
    const low = v & 0x7f;
    v >>= 7;
    if (v === 0) {
      out.push(low);
      return Buffer.from(out);
    }
    out.push(low | 0x80);
  }
}

function key32(text: string): Buffer {
  const b = base58Decode(text);
  if (!b || b.length !== 32) throw new Error(`${text} is not a 32-byte key`);
  return b;
}

function compactArray<T>(items: readonly T[], each: (item: T) => Buffer): Buffer {
  return Buffer.concat([compactU16(items.length), ...items.map(each)]);
}

/** The message bytes the signers signed. `version` as getTransaction writes it ('legacy', 0 or absent). */
export function solanaMessageBytes(message: Json, version: unknown): Buffer {
  const parts: Buffer[] = [];
  if (typeof version === 'number') parts.push(Buffer.from([0x80 | version]));
  const h = message.header;
  parts.push(Buffer.from([h.numRequiredSignatures, h.numReadonlySignedAccounts, h.numReadonlyUnsignedAccounts]));
  parts.push(compactArray(message.accountKeys as string[], key32));
  parts.push(key32(message.recentBlockhash));
  parts.push(
    compactArray(message.instructions as Json[], (ix) =>
      Buffer.concat([Buffer.from([ix.programIdIndex]), compactArray(ix.accounts as number[], (i) => Buffer.from([i])), compactArray([...base58Decode(ix.data)!], (b) => Buffer.from([b]))]),
    ),
  );
  if (typeof version === 'number') {
    parts.push(
      compactArray((message.addressTableLookups ?? []) as Json[], (l) =>
        Buffer.concat([key32(l.accountKey), compactArray(l.writableIndexes as number[], (i) => Buffer.from([i])), compactArray(l.readonlyIndexes as number[], (i) => Buffer.from([i]))]),
      ),
    );
  }
  return Buffer.concat(parts);
}

/** Ed25519 public key from its 32 raw bytes (SPKI DER prefix of RFC 8410). */
function ed25519Key(raw: Buffer) {
  return createPublicKey({ key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), raw]), format: 'der', type: 'spki' });
}

/**
 * `tx` is a getTransaction result or a getBlock transaction entry in `json` encoding.
 * `verifySignatures: false` only for a transaction a test edited (its signatures no longer match).
 */
export function solanaWireTransaction(tx: Json, encoding: 'base64' | 'base58', opts: { verifySignatures?: boolean } = {}): string {
  const { message, signatures } = tx.transaction;
  const messageBytes = solanaMessageBytes(message, tx.version);
  const sigs = (signatures as string[]).map((s) => base58Decode(s)!);
  for (const [i, sig] of sigs.entries()) {
    if (opts.verifySignatures === false) break;
    if (!verify(null, messageBytes, ed25519Key(key32(message.accountKeys[i])), sig)) {
      throw new Error(`signature ${i} of ${signatures[0]} does not verify over the written message`);
    }
  }
  const wire = Buffer.concat([compactArray(sigs, (s) => s), messageBytes]);
  return encoding === 'base64' ? wire.toString('base64') : base58Encode(wire);
}
