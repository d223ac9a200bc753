import type { BlockRef } from '../types';
import { btcToSats } from './amounts';
import { address, field, hash32, isObj, nonNegInt, safeInt, singleAddress, type Obj } from './json';
import type { ReadResult, UtxoInput, UtxoOutput } from './model';

/**
 * Bitcoin Core JSON: `getblock <hash> 2|3` blocks and verbose `getrawtransaction` objects.
 * Verbosity 2 carries no input addresses or values; verbosity 3 (and `getrawtransaction … 2` on
 * Core ≥ 25) adds a `prevout` per input, which makes them known.
 */

/** New Core: `scriptPubKey.address`; Core < 22: `scriptPubKey.addresses[]`. */
function scriptAddress(scriptPubKey: unknown): string | null {
  if (!isObj(scriptPubKey)) return null;
  if (scriptPubKey.address !== undefined) return address(scriptPubKey.address);
  return singleAddress(scriptPubKey.addresses);
}

export function readCoreTx(raw: unknown): ReadResult {
  if (typeof raw === 'string') {
    return { ok: false, reason: 'transaction is only a txid (getblock verbosity 1); need verbosity >= 2' };
  }
  if (!isObj(raw)) return { ok: false, reason: 'transaction is not an object' };
  const txid = hash32(raw.txid);
  if (txid === null) return { ok: false, reason: 'missing or invalid txid' };
  if (!Array.isArray(raw.vin)) return { ok: false, reason: 'vin is not an array' };
  if (!Array.isArray(raw.vout)) return { ok: false, reason: 'vout is not an array' };

  const coinbase = typeof field(raw.vin[0], 'coinbase') === 'string';
  const inputs: UtxoInput[] = [];
  if (!coinbase) {
    for (let i = 0; i < raw.vin.length; i++) {
      const vin: unknown = raw.vin[i];
      if (!isObj(vin)) return { ok: false, reason: `vin[${i}] is not an object` };
      inputs.push(readInput(vin));
    }
  }
  const outputs: UtxoOutput[] = [];
  for (let i = 0; i < raw.vout.length; i++) {
    const vout: unknown = raw.vout[i];
    if (!isObj(vout)) return { ok: false, reason: `vout[${i}] is not an object` };
    outputs.push({
      address: scriptAddress(vout.scriptPubKey),
      amount: btcToSats(vout.value),
      index: nonNegInt(vout.n) ?? i,
    });
  }
  return {
    ok: true,
    tx: {
      txid,
      version: safeInt(raw.version),
      coinbase,
      inputs,
      outputs,
      reportedFee: raw.fee === undefined ? null : btcToSats(raw.fee),
    },
  };
}

function readInput(vin: Obj): UtxoInput {
  const prevout = vin.prevout;
  return {
    address: isObj(prevout) ? scriptAddress(prevout.scriptPubKey) : null,
    amount: isObj(prevout) ? btcToSats(prevout.value) : null,
    prevTxid: hash32(vin.txid),
    prevVout: nonNegInt(vin.vout),
  };
}

export function coreBlockRef(block: Obj): BlockRef {
  return {
    height: nonNegInt(block.height),
    hash: hash32(block.hash),
    parent_hash: hash32(block.previousblockhash),
    time: nonNegInt(block.time),
  };
}

/**
 * A lone verbose transaction names its block by `blockhash`/`blocktime` only (no height); without
 * `blockhash` it is a mempool transaction.
 */
export function coreTxBlockRef(tx: Obj): BlockRef {
  const hash = hash32(tx.blockhash);
  return {
    height: nonNegInt(tx.height) ?? nonNegInt(tx.blockheight),
    hash,
    parent_hash: null,
    time: hash === null ? null : (nonNegInt(tx.blocktime) ?? nonNegInt(tx.time)),
  };
}
