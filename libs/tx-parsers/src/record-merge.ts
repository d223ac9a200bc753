import { isDeepStrictEqual } from 'node:util';
import type { NormalizedTx, TokenTransfer, TransferType, TxStatus } from './types';

/**
 * One transaction's records from several deliveries of the same block, merged into one: what a
 * streamer operator gets when one stream carries blocks, another receipts and a third traces.
 * Each delivery knows part of the transaction (a block: the transaction's own fields; receipts:
 * status, fee, gas used and the token transfers of the logs; traces: internal transfers and the
 * status of the top call), and the parsers leave what they did not see null or empty. So the
 * merge keeps every fact either record states ("more information wins"):
 *
 * - a field null in one record takes the other's value;
 * - `tx_status`: `failed` > `success` > `pending`. A record built without an outcome calls a
 *   mined transaction `success` because nothing says otherwise; no parser assumes `failed`, so
 *   a `failed` always comes from a receipt, a transaction info or a trace and wins;
 * - `transfer_type`: `system` > `contract_creation` > `token` (only while the merged record
 *   moves tokens) > `native` > `contract_call`, which is what the parsers decide with every
 *   source at hand: tokens are only known from logs, the coin value only from the transaction;
 * - lists (`token_transfers`, `internal_transactions`, `from_details`, `to_details`) are the
 *   union of both: an entry either record lists is listed once (or as often as one record
 *   lists it). A token transfer read from call data (Tron without its
 *   transaction info: no `log_index`) is dropped once a transfer read from a log states the same
 *   movement (same standard, token, sender, receiver and amount): the log says it happened;
 * - two different non-null values of any other field (consistent deliveries of one block never
 *   disagree there) resolve to the longer, then the greater, so the result is the same in any
 *   order.
 *
 * Pure: no I/O. The caller merges only records of one transaction in one block: a record of
 * another block hash is a reorg and replaces the stored one instead.
 */
export function mergeRecords(a: NormalizedTx, b: NormalizedTx): NormalizedTx {
  return mergeInto(a, b).record;
}

/**
 * `mergeRecords(stored, delivered)`, and whether the result says anything `stored` did not
 * (without a deep comparison: each field is compared as it is merged, lists by identity, since a
 * merge that adds no entry returns the stored list itself).
 */
export function mergeInto(stored: NormalizedTx, delivered: NormalizedTx): { record: NormalizedTx; changed: boolean } {
  const a = stored;
  const b = delivered;
  if (a.tx_hash !== b.tx_hash || a.chain_type !== b.chain_type || a.chain_id !== b.chain_id) {
    throw new TypeError(`cannot merge records of different transactions: ${a.chain_type}:${a.chain_id}:${a.tx_hash} and ${b.chain_type}:${b.chain_id}:${b.tx_hash}`);
  }
  // Key order of `b` (a parser's record; a stored one comes back from jsonb in its own order).
  const out: Record<string, unknown> = {};
  const ra = a as unknown as Record<string, unknown>;
  const rb = b as unknown as Record<string, unknown>;
  for (const key of Object.keys(rb)) out[key] = ra[key];
  for (const key of Object.keys(ra)) if (!(key in out)) out[key] = ra[key];

  for (const key of Object.keys(out)) {
    if (LIST_FIELDS.has(key) || key === 'tx_status' || key === 'transfer_type') continue;
    out[key] = mergeScalar(ra[key], rb[key]);
  }
  const merged = out as unknown as NormalizedTx;
  merged.tx_status = mergeStatus(a.tx_status, b.tx_status);
  merged.token_transfers = mergeTokenTransfers(a.token_transfers ?? [], b.token_transfers ?? []);
  merged.internal_transactions = mergeList(a.internal_transactions ?? [], b.internal_transactions ?? [], (e) => e.instr_index);
  merged.from_details = mergeList(a.from_details ?? [], b.from_details ?? []);
  merged.to_details = mergeList(a.to_details ?? [], b.to_details ?? []);
  merged.transfer_type = mergeTransferType(a.transfer_type, b.transfer_type, merged.token_transfers.length > 0);
  let changed = false;
  for (const key of Object.keys(out)) {
    if (out[key] !== ra[key] && !(LIST_FIELDS.has(key) && ra[key] === undefined && (out[key] as unknown[]).length === 0)) changed = true;
  }
  return { record: merged, changed };
}

/** Whether `merged` says anything `stored` did not (deep comparison, key order ignored). */
export function recordChanged(stored: NormalizedTx, merged: NormalizedTx): boolean {
  return !isDeepStrictEqual(stored, merged);
}

const LIST_FIELDS = new Set(['token_transfers', 'internal_transactions', 'from_details', 'to_details']);

const STATUS_RANK: Record<TxStatus, number> = { pending: 1, success: 2, failed: 3 };

function mergeStatus(a: TxStatus | null, b: TxStatus | null): TxStatus | null {
  if (a === null || a === undefined) return b ?? null;
  if (b === null || b === undefined) return a;
  return (STATUS_RANK[a] ?? 0) >= (STATUS_RANK[b] ?? 0) ? a : b;
}

const TYPE_RANK: Record<TransferType, number> = { contract_call: 1, native: 2, token: 3, contract_creation: 4, system: 5 };

function mergeTransferType(a: TransferType | null, b: TransferType | null, movesTokens: boolean): TransferType | null {
  if (a === b) return a;
  const candidates = [a, b].filter((t): t is TransferType => t !== null && t !== undefined);
  if (!candidates.length) return null;
  // `token` only stands while the merged record moves tokens (a guess from call data may have
  // been replaced by the logs, which moved nothing); the other record then says what remains.
  const kept = candidates.filter((t) => t !== 'token' || movesTokens);
  if (!kept.length) return candidates[0];
  if (movesTokens && kept.every((t) => (TYPE_RANK[t] ?? 0) < TYPE_RANK.token)) return 'token';
  return kept.reduce((best, t) => ((TYPE_RANK[t] ?? 0) > (TYPE_RANK[best] ?? 0) ? t : best));
}

function mergeScalar(a: unknown, b: unknown): unknown {
  if (a === b) return a;
  if (a === null || a === undefined) return b === undefined ? null : b;
  if (b === null || b === undefined) return a;
  if (isDeepStrictEqual(a, b)) return a;
  const sa = typeof a === 'string' ? a : JSON.stringify(a);
  const sb = typeof b === 'string' ? b : JSON.stringify(b);
  if (sa.length !== sb.length) return sa.length > sb.length ? a : b;
  return sa >= sb ? a : b;
}

/**
 * Union of two lists, as multisets: an entry both lists hold is there once (twice if either list
 * holds it twice: a parser may list one movement twice, e.g. two equal transfers of one batch).
 * When one list holds the other, it is returned as it is (its order is the parser's); otherwise
 * the entries of `b` the first list lacks are appended and the result ordered by `position`
 * (entries without one first, stable).
 */
function mergeList<T>(a: readonly T[], b: readonly T[], position?: (e: T) => number | null): T[] {
  if (!b.length) return a as T[];
  if (!a.length) return b as T[];
  const keysB = b.map(entryKey);
  const countA = countKeys(a.map(entryKey));
  const countB = countKeys(keysB);
  if ([...countB].every(([k, n]) => n <= (countA.get(k) ?? 0))) return a as T[];
  if ([...countA].every(([k, n]) => n <= (countB.get(k) ?? 0))) return b as T[];
  const out = [...a];
  const taken = new Map<string, number>();
  keysB.forEach((k, i) => {
    const seen = (taken.get(k) ?? 0) + 1;
    taken.set(k, seen);
    if (seen > (countA.get(k) ?? 0)) out.push(b[i]);
  });
  if (!position) return out;
  return out
    .map((e, i) => ({ e, i, p: position(e) }))
    .sort((x, y) => (x.p ?? -1) - (y.p ?? -1) || x.i - y.i)
    .map((x) => x.e);
}

function countKeys(keys: readonly string[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const k of keys) out.set(k, (out.get(k) ?? 0) + 1);
  return out;
}

/** Identity of a list entry: its content with keys sorted (a stored entry comes back from jsonb reordered). */
function entryKey(e: unknown): string {
  if (e === null || typeof e !== 'object') return JSON.stringify(e);
  const o = e as Record<string, unknown>;
  return JSON.stringify(Object.keys(o).sort().map((k) => [k, o[k]]));
}

function mergeTokenTransfers(a: readonly TokenTransfer[], b: readonly TokenTransfer[]): TokenTransfer[] {
  const union = mergeList(a, b, (t) => t.log_index);
  const fromLogs = new Set(union.filter((t) => t.log_index !== null).map(movementKey));
  if (!fromLogs.size) return union;
  const kept = union.filter((t) => t.log_index !== null || !fromLogs.has(movementKey(t)));
  if (kept.length === union.length) return union;
  // The first list itself when nothing of the second stayed (it added nothing).
  return kept.length === a.length && kept.every((t, i) => t === a[i]) ? (a as TokenTransfer[]) : kept;
}

function movementKey(t: TokenTransfer): string {
  return JSON.stringify([t.standard, t.token_contract_address ?? t.mint, t.from_address, t.to_address, t.amount]);
}
