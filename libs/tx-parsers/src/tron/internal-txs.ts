import type { InternalTransaction } from '../types';
import { toTronAddress } from './address';
import { asArray, asObject, asString, isHex, toDecimal, type JsonObject } from './json';
import { trc10AssetId } from './token-transfers';

/** What a contract's inner call carried: TRX (`tokenId` absent) or a TRC-10 asset. */
interface CallValue {
  amount: string;
  tokenId: string | null;
}

/** `note` is the hex of the call kind (`call`, `create`, `suicide`…). */
function noteText(v: unknown): string | null {
  const hex = asString(v);
  if (!hex || hex.length > 64 || !isHex(hex)) return null;
  const text = Buffer.from(hex, 'hex').toString('utf8');
  return /^[a-z]+$/i.test(text) ? text.toLowerCase() : null;
}

/**
 * The node's form (`gettransactioninfo*`): `callValueInfo: [{callValue, tokenId?}]`, one entry per
 * coin moved (an empty object when nothing moved). TronGrid's form: `data.call_value`, an object
 * of asset id → amount where `_` is TRX.
 */
function callValues(entry: JsonObject): CallValue[] {
  const out: CallValue[] = [];
  for (const item of asArray(entry.callValueInfo)) {
    const o = asObject(item);
    const amount = toDecimal(o?.callValue);
    if (!o || amount === null || amount === '0') continue;
    const tokenId = o.tokenId === undefined ? null : trc10AssetId(o.tokenId);
    if (o.tokenId !== undefined && tokenId === null) continue; // an asset we cannot name
    out.push({ amount, tokenId });
  }
  const gridValues = asObject(asObject(entry.data)?.call_value);
  for (const [key, value] of Object.entries(gridValues ?? {})) {
    const amount = toDecimal(value);
    const tokenId = key === '_' ? null : trc10AssetId(key);
    if (amount !== null && amount !== '0' && (key === '_' || tokenId !== null)) out.push({ amount, tokenId });
  }
  return out;
}

function isRejected(entry: JsonObject): boolean {
  return entry.rejected === true || asObject(entry.data)?.rejected === true;
}

/**
 * TRX and TRC-10 moved by contracts inside a transaction, from the transaction info's
 * `internal_transactions` (node form: `caller_address`, `transferTo_address`) or a TronGrid
 * item's (`from_address`, `to_address`), as internal transfers: `amount` in sun or TRC-10 units,
 * `program_id` the TRC-10 asset id (null for TRX), `instruction` the call kind from `note`.
 * Rejected internal transactions (reverted) moved nothing and are left out, as are inner calls
 * that carried no value.
 */
export function tronInternalTransfers(list: unknown): InternalTransaction[] {
  const out: InternalTransaction[] = [];
  asArray(list).forEach((item, index) => {
    const entry = asObject(item);
    if (!entry || isRejected(entry)) return;
    const from = toTronAddress(entry.caller_address ?? entry.from_address);
    const to = toTronAddress(entry.transferTo_address ?? entry.to_address);
    for (const { amount, tokenId } of callValues(entry)) {
      out.push({
        from_address: from,
        to_address: to,
        amount,
        tx_status: 'success',
        program_id: tokenId,
        instruction: noteText(entry.note ?? asObject(entry.data)?.note),
        description: tokenId === null ? 'TRX moved by a contract' : `TRC-10 ${tokenId} moved by a contract`,
        instr_index: index,
        depth: null,
      });
    }
  });
  return out;
}
