import { Block, Transaction } from 'bitcoinjs-lib';
import type { JsonObject } from './json';

/**
 * A decoded (verbosity 2) block serialized back the way `getblock <hash> 0` returns it, with
 * bitcoinjs-lib: the header from its fields, then every transaction's own `hex`. Null when a
 * transaction carries no `hex` or the result does not hash to the block's own hash, so the
 * simulator never serves bytes the real node would not.
 */
export function serializedBlock(block: JsonObject): string | null {
  const txs = block.tx;
  if (!Array.isArray(txs) || typeof block.hash !== 'string') return null;
  try {
    const out = new Block();
    out.version = block.version as number;
    out.prevHash = Buffer.from(String(block.previousblockhash ?? '00'.repeat(32)), 'hex').reverse();
    out.merkleRoot = Buffer.from(String(block.merkleroot), 'hex').reverse();
    out.timestamp = block.time as number;
    out.bits = parseInt(String(block.bits), 16);
    out.nonce = block.nonce as number;
    out.transactions = txs.map((t) => Transaction.fromHex(String((t as JsonObject).hex)));
    return out.getId() === block.hash ? out.toHex() : null;
  } catch {
    return null;
  }
}
