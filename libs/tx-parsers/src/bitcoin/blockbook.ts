import type { BlockRef } from '../types';
import { satsFromString } from './amounts';
import { field, hash32, isObj, nonNegInt, positiveInt, safeInt, singleAddress, type Obj } from './json';
import type { ReadResult, UtxoInput, UtxoOutput } from './model';

/**
 * Blockbook JSON (`bb_getBlock` blocks, `bb_getTx` transactions): amounts are satoshi strings,
 * inputs already carry the spent output's `addresses` and `value`. Blockbook omits empty fields
 * (Go `omitempty`), which matters twice: an input spending output 0 has no `vout` key, and an
 * input whose value is unknown has no `value` key.
 */

/** `isAddress: false` marks pseudo-addresses such as "OP_RETURN (…)" that own nothing. */
function bbAddress(entry: Obj): string | null {
  return entry.isAddress === false ? null : singleAddress(entry.addresses);
}

/**
 * The coinbase input carries `coinbase` when Blockbook passes it through; without it, the only
 * input of the block's first transaction having no `txid` is the coinbase too.
 */
function isCoinbase(vin: unknown[], positionInBlock: number | null): boolean {
  if (typeof field(vin[0], 'coinbase') === 'string') return true;
  return positionInBlock === 0 && vin.length === 1 && field(vin[0], 'txid') === undefined;
}

export function readBlockbookTx(raw: unknown, positionInBlock: number | null): ReadResult {
  if (!isObj(raw)) return { ok: false, reason: 'transaction is not an object' };
  const txid = hash32(raw.txid);
  if (txid === null) return { ok: false, reason: 'missing or invalid txid' };
  if (!Array.isArray(raw.vin)) return { ok: false, reason: 'vin is not an array' };
  if (!Array.isArray(raw.vout)) return { ok: false, reason: 'vout is not an array' };

  const coinbase = isCoinbase(raw.vin, positionInBlock);
  const inputs: UtxoInput[] = [];
  if (!coinbase) {
    for (let i = 0; i < raw.vin.length; i++) {
      const vin: unknown = raw.vin[i];
      if (!isObj(vin)) return { ok: false, reason: `vin[${i}] is not an object` };
      const prevTxid = hash32(vin.txid);
      inputs.push({
        address: bbAddress(vin),
        amount: satsFromString(vin.value),
        prevTxid,
        prevVout: vin.vout === undefined ? (prevTxid === null ? null : 0) : nonNegInt(vin.vout),
      });
    }
  }
  const outputs: UtxoOutput[] = [];
  for (let i = 0; i < raw.vout.length; i++) {
    const vout: unknown = raw.vout[i];
    if (!isObj(vout)) return { ok: false, reason: `vout[${i}] is not an object` };
    outputs.push({ address: bbAddress(vout), amount: satsFromString(vout.value), index: nonNegInt(vout.n) ?? i });
  }
  return {
    ok: true,
    tx: {
      txid,
      version: safeInt(raw.version),
      coinbase,
      inputs,
      outputs,
      reportedFee: raw.fees === undefined ? null : satsFromString(raw.fees),
    },
  };
}

export function blockbookBlockRef(block: Obj): BlockRef {
  return {
    height: nonNegInt(block.height),
    hash: hash32(block.hash),
    parent_hash: hash32(block.previousBlockHash),
    time: nonNegInt(block.time),
  };
}

/** Unconfirmed Blockbook transactions have `blockHeight` -1 (or 0) and `blockTime` 0. */
export function blockbookTxBlockRef(tx: Obj): BlockRef {
  return {
    height: positiveInt(tx.blockHeight),
    hash: hash32(tx.blockHash),
    parent_hash: null,
    time: positiveInt(tx.blockTime),
  };
}

/** A transaction given on its own, as Blockbook rather than Core JSON. */
export function looksLikeBlockbookTx(tx: Obj): boolean {
  if ('blockHeight' in tx || 'valueIn' in tx || 'fees' in tx || 'blockTime' in tx) return true;
  if (!Array.isArray(tx.vout)) return false;
  for (const out of tx.vout) {
    if (!isObj(out)) continue;
    if (isObj(out.scriptPubKey)) return false;
    if (typeof out.value === 'string' || Array.isArray(out.addresses)) return true;
  }
  return false;
}
