import type { NetworkInfo } from '@chainpipe/chains';
import type { Knex } from '@chainpipe/db';
import { addressIndexEntries, type NormalizedTx } from '@chainpipe/tx-parsers';

/**
 * Pure row building for the tx schema: what goes into each column, how many rows fit in one
 * statement, and the bind values of the write statements (one array per column; the
 * placeholders of a multi-row VALUES list remain for callers such as the benchmark baselines).
 * No I/O here.
 */

/**
 * Values (rows × columns) in one write statement. Rows travel as arrays, one bind parameter per
 * column, so Postgres's limit of 65535 bind parameters no longer binds; the budget keeps each
 * statement (and its arrays) a bounded size, and stays below that limit anyway.
 */
export const PG_MAX_BIND_PARAMS = 65_535;
export const DEFAULT_MAX_PARAMS_PER_STATEMENT = 30_000;

/** Columns written by an insert into tx.transactions, in VALUES order. */
export const TX_INSERT_COLUMNS = ['chain_type', 'chain_id', 'network', 'tx_hash', 'block_hash', 'height', 'tx_index', 'tx_time', 'tx_status', 'record'] as const;
/** Columns written by an insert into tx.address_index, in VALUES order. */
export const INDEX_INSERT_COLUMNS = ['address', 'chain_type', 'chain_id', 'tx_id', 'tokens', 'transfer_type'] as const;

export type TxRowValues = [string, number, string, string, string | null, number | null, number | null, number | null, string | null, string];
export type IndexRowValues = [address: string, chainType: string, chainId: number, txId: string, tokens: string[], transferType: string | null];
export type TokenIndexRowValues = [address: string, token: string, chainType: string, chainId: number, txId: string, transferType: string | null];

/**
 * Postgres text and jsonb cannot hold U+0000, which JSON may carry (a Solana memo, a hostile
 * payload). It becomes U+FFFD in the stored record instead of failing the whole block. Only an
 * escape preceded by an even number of backslashes is a real `\u0000` (`\\u0000` is the text
 * backslash-u-0-0-0-0 and stays).
 */
const NUL_ESCAPE = /(?<!\\)((?:\\\\)*)\\u0000/g;
export function recordJson(tx: NormalizedTx): string {
  const json = JSON.stringify(tx);
  return json.includes('\\u0000') ? json.replace(NUL_ESCAPE, '$1\\ufffd') : json;
}

/** Parsed records must belong to the network they are stored under (the unique key uses it). */
export function assertSameChain(network: NetworkInfo, tx: NormalizedTx): void {
  if (tx.chain_type !== network.chainType || tx.chain_id !== network.chainId) {
    throw new TypeError(`transaction ${tx.tx_hash} is ${tx.chain_type}:${tx.chain_id}, not of network ${network.network} (${network.chainType}:${network.chainId})`);
  }
}

/**
 * One entry per tx hash, first occurrence kept: a multi-row upsert may not touch the same row
 * twice ("ON CONFLICT DO UPDATE command cannot affect row a second time").
 */
export function uniqueByHash(txs: readonly NormalizedTx[]): NormalizedTx[] {
  const seen = new Set<string>();
  const out: NormalizedTx[] = [];
  for (const tx of txs) {
    if (seen.has(tx.tx_hash)) continue;
    seen.add(tx.tx_hash);
    out.push(tx);
  }
  return out;
}

export function txRowValues(network: NetworkInfo, tx: NormalizedTx): TxRowValues {
  return [
    network.chainType,
    network.chainId,
    network.network,
    tx.tx_hash,
    tx.block_hash,
    tx.height,
    tx.tx_index,
    tx.tx_time,
    tx.tx_status,
    recordJson(tx),
  ];
}

/**
 * The bind values of the transaction upserts for rows: one array per TX_INSERT_COLUMNS column
 * but the last, then the records as one JSON array (each record is JSON text already).
 */
export function txRowArrays(rows: readonly TxRowValues[]): unknown[] {
  const columns: unknown[][] = Array.from({ length: TX_INSERT_COLUMNS.length - 1 }, () => []);
  const records: string[] = [];
  for (const r of rows) {
    for (let c = 0; c < columns.length; c++) columns[c].push(r[c]);
    records.push(r[TX_INSERT_COLUMNS.length - 1] as string);
  }
  return [...columns, `[${records.join(',')}]`];
}

/**
 * Address index rows of one stored transaction: one per address, with the tokens it moved and the
 * record's transfer_type (the `tx_type` filter walks an index on it, so it must be the stored
 * record's: callers pass the record as stored, not as received).
 */
export function indexRowValues(network: NetworkInfo, txId: string, tx: NormalizedTx): IndexRowValues[] {
  const type = tx.transfer_type ?? null;
  return addressIndexEntries(tx, network.family).map((e) => [e.address, network.chainType, network.chainId, txId, e.tokens, type]);
}

/**
 * The bind values of UPSERT_INDEX_SQL for address index rows: one array per column, in
 * INDEX_INSERT_COLUMNS order, each row's `tokens` as a JSON array.
 */
export function indexRowArrays(rows: readonly IndexRowValues[]): [string[], string[], number[], string[], string[], (string | null)[]] {
  const out: [string[], string[], number[], string[], string[], (string | null)[]] = [[], [], [], [], [], []];
  for (const [address, chainType, chainId, txId, tokens, type] of rows) {
    out[0].push(address);
    out[1].push(chainType);
    out[2].push(chainId);
    out[3].push(txId);
    out[4].push(JSON.stringify(tokens));
    out[5].push(type);
  }
  return out;
}

/** Token index rows of address index rows: one per (address, token it moved, transaction). */
export function tokenIndexRowValues(rows: readonly IndexRowValues[]): TokenIndexRowValues[] {
  const out: TokenIndexRowValues[] = [];
  for (const [address, chainType, chainId, txId, tokens, type] of rows) {
    for (const token of tokens) out.push([address, token, chainType, chainId, txId, type]);
  }
  return out;
}

/** Rows per statement so that rows × columns stays within the parameter budget. */
export function rowsPerStatement(columns: number, maxParams: number = DEFAULT_MAX_PARAMS_PER_STATEMENT): number {
  if (!Number.isInteger(columns) || columns < 1) throw new RangeError('columns must be a positive integer');
  const budget = Math.min(maxParams, PG_MAX_BIND_PARAMS);
  const rows = Math.floor(budget / columns);
  if (rows < 1) throw new RangeError(`a parameter budget of ${maxParams} cannot hold one row of ${columns} columns`);
  return rows;
}

/** Splits rows into consecutive statements that each stay within the parameter budget. */
export function chunkRows<T extends readonly unknown[]>(rows: readonly T[], columns: number, maxParams?: number): T[][] {
  const size = rowsPerStatement(columns, maxParams);
  const out: T[][] = [];
  for (let i = 0; i < rows.length; i += size) out.push(rows.slice(i, i + size));
  return out;
}

/** `(?, ?, ?), (?, ?, ?)` for knex bindings; `casts` adds `::type` to a column's placeholder. */
export function valuesPlaceholders(rowCount: number, columns: number, casts: Readonly<Record<number, string>> = {}): string {
  const one = `(${Array.from({ length: columns }, (_, i) => (casts[i] ? `?::${casts[i]}` : '?')).join(', ')})`;
  return Array.from({ length: rowCount }, () => one).join(', ');
}

/** Bind values of a multi-row statement, row after row (knex's binding type). */
export function flatten<T extends readonly Knex.RawBinding[]>(rows: readonly T[]): Knex.RawBinding[] {
  const out: Knex.RawBinding[] = [];
  for (const r of rows) for (const v of r) out.push(v);
  return out;
}

/**
 * Builds the stored form of a record from what the upsert returned: the input with the columns
 * the database may have decided differently (status moves only forward; a record without a
 * block keeps the block it is already in). Equal to the `record` column, without reading it back.
 */
export function storedRecord(
  tx: NormalizedTx,
  row: { tx_status: string | null; block_hash: string | null; height: string | number | null; tx_index: number | null; tx_time: string | number | null },
): NormalizedTx {
  return {
    ...tx,
    tx_status: row.tx_status as NormalizedTx['tx_status'],
    block_hash: row.block_hash,
    height: toNumber(row.height),
    tx_index: row.tx_index,
    tx_time: toNumber(row.tx_time),
  };
}

/** bigint columns arrive as strings (libs/db keeps int8 as text); heights and times are safe ints. */
export function toNumber(v: string | number | null): number | null {
  if (v === null) return null;
  return typeof v === 'number' ? v : Number(v);
}
