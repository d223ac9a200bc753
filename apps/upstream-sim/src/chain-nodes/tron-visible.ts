import { tronBase58ToHex, tronHexToBase58 } from '@chainpipe/chains';
import { isObject, type JsonObject } from './json';

/** How a stored fixture writes addresses: `visible: false` (hex, 41…) or `visible: true` (base58, T…). */
export type TronAddressFormat = 'hex' | 'base58';

/**
 * java-tron's `visible` switch, applied to a stored answer so every fixture can be served in
 * either form. What changes, as the two forms of the fixtures show it (block 60836289 with
 * `visible: true`, 61132092 and the 0af79242 info without):
 * - address fields (`owner_address`, `to_address`, `contract_address`, … and the block header's
 *   `witness_address`): `41…` hex ↔ Base58Check `T…`;
 * - a log's `address` (20 bytes, no `41`): hex ↔ Base58Check of `41` + the 20 bytes;
 * - `asset_name` (TRC-10 id): hex of its bytes ↔ the text itself.
 * Every other bytes field (`data`, `ref_block_*`, topics, `raw_data_hex`) is hex in both forms.
 * A value that does not convert (not an address of the other form) is left as it is.
 */
const ADDRESS_FIELDS = new Set([
  'owner_address',
  'to_address',
  'contract_address',
  'receiver_address',
  'account_address',
  'witness_address',
  'origin_address',
  'caller_address',
  'transferTo_address',
]);

function address(v: string, to: TronAddressFormat, bare: boolean): string {
  if (to === 'base58') {
    const ok = bare ? /^[0-9a-fA-F]{40}$/.test(v) : /^41[0-9a-fA-F]{40}$/.test(v);
    return ok ? (tronHexToBase58(v) ?? v) : v;
  }
  const hex = /^T[1-9A-HJ-NP-Za-km-z]{33}$/.test(v) ? tronBase58ToHex(v) : undefined;
  if (!hex) return v;
  return bare ? hex.slice(2) : hex;
}

function assetName(v: string, to: TronAddressFormat): string {
  if (to === 'hex') return Buffer.from(v, 'utf8').toString('hex');
  return /^([0-9a-fA-F]{2})+$/.test(v) ? Buffer.from(v, 'hex').toString('utf8') : v;
}

function convert(v: unknown, to: TronAddressFormat, inLog: boolean): unknown {
  if (Array.isArray(v)) return v.map((x) => convert(x, to, inLog));
  if (!isObject(v)) return v;
  const out: JsonObject = {};
  for (const [k, x] of Object.entries(v)) {
    if (typeof x === 'string' && ADDRESS_FIELDS.has(k)) out[k] = address(x, to, false);
    else if (typeof x === 'string' && k === 'address' && inLog) out[k] = address(x, to, true);
    else if (typeof x === 'string' && k === 'asset_name') out[k] = assetName(x, to);
    else out[k] = convert(x, to, k === 'log');
  }
  return out;
}

export function toTronAddressFormat(value: unknown, to: TronAddressFormat): unknown {
  return convert(value, to, false);
}

/** java-tron reads `visible` as a boolean (POST body) or the text "true" (query string). */
export function wantedFormat(visible: unknown): TronAddressFormat {
  return visible === true || (typeof visible === 'string' && visible.trim().toLowerCase() === 'true') ? 'base58' : 'hex';
}
