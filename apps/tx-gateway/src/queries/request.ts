import { CHAINS, networkByChain, normalizeAddress, normalizeTxHash, parseChainType, type ChainFamily, type ChainType, type NetworkInfo } from '@chainpipe/chains';
import type { HttpTxQueriesTransaction } from '@chainpipe/contracts';
import type { TransferType } from '@chainpipe/tx-parsers';
import type { AddressKey, HistoryFilters, HistoryQuery } from '@chainpipe/tx-store';
import { parseCursor } from './cursor';
import type { Normalized } from './normalized';

/**
 * Request normalisation of the history queries: bodies that passed their JSON Schema
 * (`schemas/http/tx/*`) become typed queries here. What the schemas cannot say is checked here
 * too (ranges of string-encoded integers, known chain types and networks, tx_type values), and
 * every problem is a message for a 400. Pure: no I/O.
 *
 * Leniency, in one place: `chain_id`, `limit` and `id` may be JSON integers or decimal strings;
 * an optional field that is null (or an empty string) counts as absent; `id` 0 means "first page".
 */

export type { Normalized } from './normalized';
/** The typed queries are the history repository's (libs/tx-store). */
export type { AddressKey, HistoryFilters, HistoryQuery } from '@chainpipe/tx-store';

export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 100;
export const MAX_GROUPS = 10;
export const MAX_ADDRESSES_PER_GROUP = 20;
export const MAX_BATCH_HASHES = 100;

/** The parser families, in the order address forms are tried when a search spans chains. */
const FAMILIES: readonly ChainFamily[] = ['evm', 'tvm', 'svm', 'utxo'];

const TRANSFER_TYPES: readonly TransferType[] = ['native', 'token', 'contract_call', 'contract_creation', 'system'];
/** Names the push bodies (TransactionResult.transferType) use, accepted as filter values too. */
const TRANSFER_TYPE_ALIASES: Readonly<Record<string, TransferType>> = { nativecoin: 'native', native_coin: 'native' };

export interface BatchGetQuery {
  network: NetworkInfo;
  /** Normalized, de-duplicated, in request order. */
  hashes: string[];
}

export interface TransactionQuery {
  network: NetworkInfo;
  txHash: string;
  noCache: boolean;
}

const ok = <T>(value: T): Normalized<T> => ({ ok: true, value });
const fail = <T>(error: string): Normalized<T> => ({ ok: false, error });

function absent(v: unknown): boolean {
  return v === undefined || v === null || (typeof v === 'string' && v.trim() === '');
}

/** An integer from a JSON integer or a decimal string; undefined when absent, NaN when neither. */
function intOf(v: unknown): number | undefined {
  if (absent(v)) return undefined;
  if (typeof v === 'number') return Number.isSafeInteger(v) ? v : NaN;
  if (typeof v === 'string' && /^\s*[0-9]{1,15}\s*$/.test(v)) return Number(v.trim());
  return NaN;
}

export function parseLimit(v: unknown): Normalized<number> {
  const n = intOf(v);
  if (n === undefined) return ok(DEFAULT_LIMIT);
  if (!Number.isInteger(n) || n < 1 || n > MAX_LIMIT) return fail(`limit must be an integer from 1 to ${MAX_LIMIT}`);
  return ok(n);
}

function parseChain(chainTypeRaw: unknown, required: boolean): Normalized<ChainType | null> {
  if (absent(chainTypeRaw)) return required ? fail('chain_type is required') : ok(null);
  const chainType = parseChainType(chainTypeRaw);
  if (!chainType) return fail(`chain_type ${JSON.stringify(String(chainTypeRaw).slice(0, 32))} is not supported (one of ${Object.keys(CHAINS).join(', ')})`);
  return ok(chainType);
}

function parseChainId(v: unknown, required: boolean): Normalized<number | null> {
  const n = intOf(v);
  if (n === undefined) return required ? fail('chain_id is required') : ok(null);
  if (!Number.isInteger(n) || n < 0 || n > 2147483647) return fail('chain_id must be a non-negative integer');
  return ok(n);
}

/** A network both fields name; a 400 message when the pair is not one of ours. */
function resolveNetwork(chainType: ChainType, chainId: number): Normalized<NetworkInfo> {
  const network = networkByChain(chainType, chainId);
  if (!network) return fail(`chain_id ${chainId} is not a supported ${chainType} network`);
  return ok(network);
}

export function parseTransferType(v: unknown): Normalized<TransferType | null> {
  if (absent(v)) return ok(null);
  if (typeof v !== 'string') return fail('tx_type must be a string');
  const t = v.trim().toLowerCase();
  const type = (TRANSFER_TYPES as readonly string[]).includes(t) ? (t as TransferType) : TRANSFER_TYPE_ALIASES[t];
  if (!type) return fail(`tx_type must be empty or one of ${TRANSFER_TYPES.join(', ')}`);
  return ok(type);
}

const EVM_ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/**
 * The forms an address is stored in (see `normalizeAddress`): one for a known chain type, else
 * one per chain family, de-duplicated (`0xAbC…` is `0xabc…` on EVM chains and `T…` on Tron).
 * Across chains, the EVM lowercasing applies only to EVM-shaped input: lowercasing a
 * case-sensitive Base58 address would name a different (non-existent) account.
 */
export function addressForms(address: string, chainType: ChainType | null): string[] {
  const a = address.trim();
  const forms = chainType
    ? [normalizeAddress(CHAINS[chainType].family, a)]
    : FAMILIES.map((f) => (f === 'evm' && !EVM_ADDRESS.test(a) ? a : normalizeAddress(f, a)));
  return [...new Set(forms.filter((f) => f.length > 0))];
}


function parseFilters(body: Record<string, unknown>, chainType: ChainType | null): Normalized<HistoryFilters> {
  const limit = parseLimit(body.limit);
  if (!limit.ok) return limit;
  const cursor = parseCursor(body.id);
  if (!cursor.ok) return cursor;
  const transferType = parseTransferType(body.tx_type);
  if (!transferType.ok) return transferType;
  const token = body.token;
  let tokens: string[] | null = null;
  if (!absent(token)) {
    if (typeof token !== 'string') return fail('token must be a string');
    tokens = addressForms(token, chainType);
  }
  return ok({ transferType: transferType.value, tokens, limit: limit.value, beforeId: cursor.value });
}

/** `POST /transfers/search` body → query. */
export function normalizeSearch(body: Record<string, unknown>): Normalized<HistoryQuery> {
  if (typeof body.address !== 'string' || body.address.trim() === '') return fail('address is required');
  const chainType = parseChain(body.chain_type, false);
  if (!chainType.ok) return chainType;
  const chainId = parseChainId(body.chain_id, false);
  if (!chainId.ok) return chainId;
  if (chainType.value && chainId.value !== null) {
    const network = resolveNetwork(chainType.value, chainId.value);
    if (!network.ok) return network;
  }
  const filters = parseFilters(body, chainType.value);
  if (!filters.ok) return filters;
  const keys = addressForms(body.address, chainType.value).map((address) => ({ address, chainType: chainType.value, chainId: chainId.value }));
  return ok({ ...filters.value, keys });
}

/** `POST /transfers/multi-chain` body → query (one key per distinct group address). */
export function normalizeMultiChain(body: Record<string, unknown>): Normalized<HistoryQuery> {
  const groups = body.addresses;
  if (!Array.isArray(groups) || groups.length < 1 || groups.length > MAX_GROUPS) return fail(`addresses must hold 1 to ${MAX_GROUPS} groups`);
  const keys = new Map<string, AddressKey>();
  for (let i = 0; i < groups.length; i++) {
    const g = groups[i] as Record<string, unknown>;
    const chainType = parseChain(g?.chain_type, true);
    if (!chainType.ok) return fail(`addresses.${i}: ${chainType.error}`);
    const chainId = parseChainId(g?.chain_id, true);
    if (!chainId.ok) return fail(`addresses.${i}: ${chainId.error}`);
    const network = resolveNetwork(chainType.value!, chainId.value!);
    if (!network.ok) return fail(`addresses.${i}: ${network.error}`);
    const list = typeof g.address === 'string' ? [g.address] : g.address;
    if (!Array.isArray(list) || list.length < 1 || list.length > MAX_ADDRESSES_PER_GROUP) {
      return fail(`addresses.${i}.address must hold 1 to ${MAX_ADDRESSES_PER_GROUP} addresses`);
    }
    for (const raw of list) {
      if (typeof raw !== 'string' || raw.trim() === '') return fail(`addresses.${i}.address must hold non-empty strings`);
      const address = normalizeAddress(network.value.family, raw);
      keys.set(`${chainType.value}:${chainId.value}:${address}`, { address, chainType: chainType.value, chainId: chainId.value });
    }
  }
  // The spec gives multi-chain no tx_type or token filter; only paging applies.
  const filters = parseFilters({ limit: body.limit, id: body.id }, null);
  if (!filters.ok) return filters;
  return ok({ ...filters.value, keys: [...keys.values()] });
}

/** `POST /transactions/batch-get` body → query. */
export function normalizeBatchGet(body: Record<string, unknown>): Normalized<BatchGetQuery> {
  const chainType = parseChain(body.chain_type, true);
  if (!chainType.ok) return chainType;
  const chainId = parseChainId(body.chain_id, true);
  if (!chainId.ok) return chainId;
  const network = resolveNetwork(chainType.value!, chainId.value!);
  if (!network.ok) return network;
  const raw = typeof body.tx_hash === 'string' ? [body.tx_hash] : body.tx_hash;
  if (!Array.isArray(raw) || raw.length < 1 || raw.length > MAX_BATCH_HASHES) return fail(`tx_hash must be a hash or 1 to ${MAX_BATCH_HASHES} hashes`);
  const hashes: string[] = [];
  for (const h of raw) {
    if (typeof h !== 'string' || h.trim() === '') return fail('tx_hash must hold non-empty strings');
    hashes.push(normalizeTxHash(network.value.family, h));
  }
  return ok({ network: network.value, hashes: [...new Set(hashes)] });
}

/** `GET /transactions/{tx_hash}` path + query → query. */
export function normalizeTransactionQuery(params: HttpTxQueriesTransaction): Normalized<TransactionQuery> {
  if (typeof params.tx_hash !== 'string' || params.tx_hash.trim() === '') return fail('tx_hash is required');
  const chainType = parseChain(params.chain_type, true);
  if (!chainType.ok) return chainType;
  const chainId = parseChainId(params.chain_id, true);
  if (!chainId.ok) return chainId;
  const network = resolveNetwork(chainType.value!, chainId.value!);
  if (!network.ok) return network;
  const flag = typeof params.no_cache === 'string' ? params.no_cache.trim().toLowerCase() : '';
  return ok({ network: network.value, txHash: normalizeTxHash(network.value.family, params.tx_hash), noCache: flag === 'true' || flag === '1' });
}
