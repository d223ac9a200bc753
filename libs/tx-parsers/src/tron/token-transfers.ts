import { tokenTransfer } from '../record-base';
import type { TokenTransfer } from '../types';
import { toTronAddress } from './address';
import { asArray, asObject, asString, hexToDecimal, isHex, strip0x } from './json';

const TRANSFER_TOPIC = 'ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';
const SELECTOR_TRANSFER = 'a9059cbb';
const SELECTOR_TRANSFER_FROM = '23b872dd';

interface TransferParts {
  from: string | null;
  to: string | null;
  contract: string | null;
  amount: string | null;
  standard: string;
  logIndex: number | null;
}

function transfer(p: TransferParts): TokenTransfer {
  return tokenTransfer({
    from_address: p.from,
    to_address: p.to,
    token_contract_address: p.contract,
    amount: p.amount,
    standard: p.standard,
    log_index: p.logIndex,
  });
}

function word(hex: string, index: number): string | undefined {
  const w = hex.slice(index * 64, index * 64 + 64);
  return w.length === 64 ? w : undefined;
}

/**
 * Transfer events of a transaction's logs, from a gettransactioninfo `log` (bare hex, 20-byte
 * address or Base58 when visible) or an eth receipt `logs` (0x-prefixed). Three topics is TRC-20
 * (amount in data); four is TRC-721 (token id in topic 3). `log_index` is the position inside the
 * transaction: native infos carry no block-wide log index, so both views use the same numbering.
 */
export function transfersFromLogs(logs: unknown): TokenTransfer[] {
  const out: TokenTransfer[] = [];
  asArray(logs).forEach((raw, i) => {
    const log = asObject(raw);
    if (!log) return;
    const topics = asArray(log.topics).map((t) => strip0x(asString(t) ?? '').toLowerCase());
    if (topics[0] !== TRANSFER_TOPIC || (topics.length !== 3 && topics.length !== 4)) return;
    const contract = toTronAddress(log.address);
    const from = toTronAddress(topics[1]);
    const to = toTronAddress(topics[2]);
    if (topics.length === 3) {
      const data = strip0x(asString(log.data) ?? '');
      const first = word(data, 0);
      const amount = first !== undefined && isHex(first) ? hexToDecimal(first) : null;
      out.push(transfer({ from, to, contract, amount, standard: 'trc20', logIndex: i }));
    } else {
      const amount = isHex(topics[3]) ? hexToDecimal(topics[3]) : null;
      out.push(transfer({ from, to, contract, amount, standard: 'trc721', logIndex: i }));
    }
  });
  return out;
}

/** `0x` + the 4-byte selector of call data (lowercase); null when there is none. */
export function methodIdOf(data: unknown): string | null {
  const hex = strip0x(asString(data) ?? '').toLowerCase();
  const selector = hex.slice(0, 8);
  return selector.length === 8 && isHex(selector) ? '0x' + selector : null;
}

/**
 * Best-effort TRC-20 transfer read from call data when no log source exists (plain node blocks
 * carry no execution result). Only `transfer(address,uint256)` and
 * `transferFrom(address,address,uint256)` are recognised; the token may still have moved nothing
 * (non-standard token, insufficient balance reverting), which is why logs win when present.
 */
export function transferFromCallData(
  data: unknown,
  caller: string | null,
  contract: string | null,
): TokenTransfer | null {
  const hex = strip0x(asString(data) ?? '').toLowerCase();
  if (!isHex(hex)) return null;
  const selector = hex.slice(0, 8);
  const args = hex.slice(8);
  if (selector === SELECTOR_TRANSFER) {
    const to = word(args, 0);
    const amount = word(args, 1);
    if (to === undefined || amount === undefined) return null;
    return transfer({
      from: caller,
      to: toTronAddress(to),
      contract,
      amount: hexToDecimal(amount),
      standard: 'trc20',
      logIndex: null,
    });
  }
  if (selector === SELECTOR_TRANSFER_FROM) {
    const from = word(args, 0);
    const to = word(args, 1);
    const amount = word(args, 2);
    if (from === undefined || to === undefined || amount === undefined) return null;
    return transfer({
      from: toTronAddress(from),
      to: toTronAddress(to),
      contract,
      amount: hexToDecimal(amount),
      standard: 'trc20',
      logIndex: null,
    });
  }
  return null;
}

/**
 * TRC-10 `asset_name`: visible=true nodes give the token id as text ("1004937"), visible=false
 * nodes hex-encode its bytes ("31303034393337"). Decoded when the hex is printable ASCII; a
 * plain numeric id cannot pass for hex text because ids start with "10" (byte 0x10 is a control
 * character).
 */
export function trc10AssetId(v: unknown): string | null {
  if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) return String(v);
  const s = asString(v)?.trim();
  if (!s) return null;
  if (s.length % 2 === 0 && isHex(s)) {
    const bytes = Buffer.from(s, 'hex');
    if (bytes.length > 0 && bytes.every((b) => b >= 0x20 && b <= 0x7e)) return bytes.toString('latin1');
  }
  return s;
}

export function trc10Transfer(
  from: string | null,
  to: string | null,
  assetId: string | null,
  amount: string | null,
): TokenTransfer {
  return transfer({ from, to, contract: assetId, amount, standard: 'trc10', logIndex: null });
}
