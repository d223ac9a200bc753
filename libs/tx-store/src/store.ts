import type { NetworkInfo } from '@chainpipe/chains';
import type { Knex } from '@chainpipe/db';
import { mergeInto, type BlockRef, type NormalizedTx } from '@chainpipe/tx-parsers';
import {
  INDEX_INSERT_COLUMNS,
  TX_INSERT_COLUMNS,
  assertSameChain,
  chunkRows,
  indexRowArrays,
  indexRowValues,
  storedRecord,
  tokenIndexRowValues,
  txRowArrays,
  txRowValues,
  uniqueByHash,
  type IndexRowValues,
  type TxRowValues,
} from './rows';
import {
  BLOCK_LOCK_SQL,
  DELETE_STALE_INDEX_SQL,
  DELETE_TOKEN_INDEX_ROWS_SQL,
  ORPHAN_OLD_BLOCKS_SQL,
  INSERT_NEW_BLOCK_TXS_SQL,
  ORPHAN_OLD_TXS_SQL,
  REPLAYED_ORPHANS_SQL,
  SELECT_STORED_TXS_SQL,
  UPSERT_BLOCK_SQL,
  UPSERT_BLOCK_TXS_SQL,
  UPSERT_INDEX_SQL,
  INSERT_INDEX_SQL,
} from './sql';
import { compactDbError } from './errors';

export interface StoredTx {
  id: string;
  network: string;
  is_reorg_resend: boolean;
  orphaned: boolean;
  tx: NormalizedTx;
}

/** A stored row as it was before a write changed it. */
export interface PreviousTx {
  tx: NormalizedTx;
  is_reorg_resend: boolean;
  orphaned: boolean;
}

export interface StoreBlockInput {
  network: NetworkInfo;
  block: BlockRef;
  transactions: NormalizedTx[];
  /** The streamer listed this height in `blocks_reorged`. */
  reorged?: boolean;
  /**
   * Names the delivery (chain-parser: topic, partition and offset of the raw record). A row this
   * delivery changed is in `changed` again when the same delivery is stored again (a replay after
   * a crash between the commit and the publish), though the replay itself changes nothing.
   */
  source?: string;
}

export interface StoreBlockResult {
  /** Every transaction of the block as stored, in block order (also on a replay). */
  stored: StoredTx[];
  /**
   * Transactions of the block(s) this call replaced that the new block does not contain; on a
   * replay of the same `source`, the ones that delivery orphaned (its publish may have been lost).
   */
  orphaned: StoredTx[];
  /** Hashes of the canonical blocks of this height that this call orphaned. */
  replacedBlocks: string[];
  /** Transactions of the block that had no row before this call. */
  inserted: number;
  /**
   * The transactions of `stored` whose stored form this call changed (new, merged with more
   * information, moved, back from orphaned), or that the same `source` changed before: what the
   * caller publishes. A delivery that adds nothing leaves it empty.
   */
  changed: StoredTx[];
  /** By id: the rows of `changed` that existed before this call wrote them, as they were. */
  previous: Map<string, PreviousTx>;
}

export interface StoreOptions {
  /**
   * Upper bound of values (rows × columns) in one statement (tests lower it to exercise
   * chunking): bind parameters of the transaction upserts, array elements of the index upsert.
   */
  maxParamsPerStatement?: number;
}

interface TxReturning {
  id: string;
  tx_hash: string;
  tx_status: string | null;
  block_hash: string | null;
  height: string | null;
  tx_index: number | null;
  tx_time: string | null;
  orphaned: boolean;
  is_reorg_resend: boolean;
  inserted: boolean;
}

interface RecordReturning {
  id: string;
  tx_hash: string;
  orphaned: boolean;
  is_reorg_resend: boolean;
  record: NormalizedTx;
  inserted?: boolean;
}

const toStored = (network: string, row: RecordReturning): StoredTx => ({
  id: row.id,
  network,
  is_reorg_resend: row.is_reorg_resend,
  orphaned: row.orphaned,
  tx: row.record,
});

/**
 * The block of transactions delivered without one (a chain origin's answer to a look-up, a
 * pending transaction): no block row and no reorg decision. storeBlock merges each into what is
 * stored (its status only moves forward) and never moves a stored transaction out of its block.
 */
export const NO_BLOCK: Readonly<BlockRef> = Object.freeze({ height: null, hash: null, parent_hash: null, time: null });

/**
 * Stores one parsed block atomically (one DB transaction): block row, transactions, address
 * index; handles reorgs; returns every transaction of the block as stored (also on a replay of
 * the same block), plus the transactions orphaned by this call.
 *
 * - Deliveries of one block merge: a transaction already stored in the same block (or in none,
 *   or delivered without a block hash, as callTracer traces are) is stored as
 *   `mergeRecords(stored, delivered)`, so a receipts or traces delivery adds to what a block
 *   delivery brought and never erases it, in any order. A row the merge leaves as it was is not
 *   written at all (nor its index rows), and is not in `changed`.
 * - A replay (same network, height and hash) returns the same rows, ids and flags and changes
 *   nothing; `changed` then only lists rows the same `source` had changed (see StoreBlockInput).
 * - Reorg: when this height has a canonical block under another hash (or the streamer flagged the
 *   height as reorged), that block is orphaned; its transactions the new block does not contain
 *   get `orphaned = true` and are returned in `orphaned`; transactions moved from it (or from any
 *   other block, or back from an orphaned one) are re-pointed, get the new block's record (not a
 *   merge: another block may have executed them differently) and `is_reorg_resend = true`,
 *   persisted; brand-new ones have `is_reorg_resend = false`.
 * - Address index rows (tx.address_index, tx.address_token_index) of orphaned transactions stay:
 *   readers check the transaction's `orphaned` flag, and the rows are right again if the
 *   transaction comes back. Index rows always follow the record as stored (the merged one), also
 *   its transfer_type (the `tx_type` filter's index).
 * - The transactions of a block with height and hash are stored in that block (their own
 *   block_hash/height are set from it). A block without height or hash (getTransaction results
 *   grouped by slot, hash-less traces) has no block row and no reorg handling; its records never
 *   move a transaction out of a block it is in.
 * - Writers of one (network, height) are serialised by a transaction-scoped advisory lock, so two
 *   consumers storing the same block at once (a rebalance) behave as a store and a replay.
 */
export async function storeBlock(db: Knex, input: StoreBlockInput, opts: StoreOptions = {}): Promise<StoreBlockResult> {
  const prepared = prepareBlock(input);
  return inTransaction(db, (trx) => storeBlockIn(trx, prepared, opts));
}

/**
 * Several blocks in one DB transaction, in the order given, each stored exactly as storeBlock
 * stores it alone (its advisory lock, reorg handling, merge, index), so the results are those of
 * storing them one after the other: a later block sees what an earlier one wrote. Either all are
 * stored or none (a failure rolls every block back). One commit instead of one per block: the
 * chain-parser stores the blocks of a consumer batch this way. `prepare` completes an input
 * inside the transaction before it is stored (chain-parser: Bitcoin inputs resolved from stored
 * outputs, which then include the outputs of the earlier blocks of the same call).
 */
export async function storeBlocks(
  db: Knex,
  inputs: readonly StoreBlockInput[],
  opts: StoreOptions & { prepare?: (trx: Knex.Transaction, input: StoreBlockInput) => Promise<StoreBlockInput> } = {},
): Promise<StoreBlockResult[]> {
  if (!inputs.length) return [];
  return inTransaction(db, async (trx) => {
    const results: StoreBlockResult[] = [];
    for (const input of inputs) results.push(await storeBlockIn(trx, prepareBlock(opts.prepare ? await opts.prepare(trx, input) : input), opts));
    return results;
  });
}

interface PreparedBlock {
  input: StoreBlockInput;
  txs: NormalizedTx[];
}

/** The block's transactions, each once, placed in the block; throws for a transaction of another chain. */
function prepareBlock(input: StoreBlockInput): PreparedBlock {
  const { network, block } = input;
  const hasBlockRow = block.height !== null && block.hash !== null;
  // The block is the unit of reorg handling: its transactions are stored in it, whatever a
  // parser put in their own block fields.
  const txs = uniqueByHash(input.transactions).map((tx) =>
    hasBlockRow && (tx.block_hash !== block.hash || tx.height !== block.height) ? { ...tx, block_hash: block.hash, height: block.height } : tx,
  );
  for (const tx of txs) assertSameChain(network, tx);
  return { input, txs };
}

/** storeBlock's work inside a DB transaction. */
async function storeBlockIn(trx: Knex.Transaction, { input, txs }: PreparedBlock, opts: StoreOptions): Promise<StoreBlockResult> {
  const { network, block } = input;
  const source = input.source ?? null;
  const hasBlockRow = block.height !== null && block.hash !== null;
  if (block.height !== null) await trx.raw(BLOCK_LOCK_SQL, [`${network.network}:${block.height}`]);

  let replacedBlocks: string[] = [];
  let earlierOrphans: string[] = [];
  if (hasBlockRow) {
    // `reorged` needs nothing extra: any canonical block of this height under another hash is
    // replaced either way, and the same hash again is a replay whatever the streamer says.
    const at = [network.network, block.height, block.hash];
    const old = await trx.raw<{ rows: { hash: string; replaced: boolean }[] }>(ORPHAN_OLD_BLOCKS_SQL, [...at, ...at]);
    replacedBlocks = old.rows.filter((r) => r.replaced).map((r) => r.hash);
    earlierOrphans = old.rows.filter((r) => !r.replaced).map((r) => r.hash);
    await trx.raw(UPSERT_BLOCK_SQL, [network.network, block.height, block.hash, block.parent_hash, block.time, txs.length]);
  }

  // New transactions go in as they are; the others are read, merged, and written if changed.
  const inserted = await upsertTransactions(trx, txs.map((tx) => txRowValues(network, tx)), INSERT_NEW_BLOCK_TXS_SQL, opts, [source]);
  const byHash = new Map(inserted.map((r) => [r.tx_hash, r]));
  const isNew = new Set(byHash.keys());
  const existing = await storedRows(trx, network, txs.filter((tx) => !isNew.has(tx.tx_hash)));
  const plans: WritePlan[] = txs.map((tx) => (isNew.has(tx.tx_hash) ? { write: tx } : planWrite(existing.get(tx.tx_hash), tx)));
  const updates = plans.flatMap((p) => (p.write && !isNew.has(p.write.tx_hash) ? [p.write] : []));
  const updated = await upsertTransactions(trx, updates.map((tx) => txRowValues(network, tx)), UPSERT_BLOCK_TXS_SQL, opts, [source]);
  for (const r of updated) byHash.set(r.tx_hash, r);
  const written: StoredTx[] = [];
  const changed: StoredTx[] = [];
  const previous = new Map<string, PreviousTx>();
  const stored: StoredTx[] = plans.map((p) => {
    if (!p.write) {
      const kept = toStored(network.network, p.row);
      if (source !== null && p.row.changed_by === source) changed.push(kept);
      return kept;
    }
    const row = byHash.get(p.write.tx_hash);
    if (!row) throw new Error(`upsert returned no row for ${p.write.tx_hash}`);
    const s: StoredTx = { id: row.id, network: network.network, is_reorg_resend: row.is_reorg_resend, orphaned: row.orphaned, tx: storedRecord(p.write, row) };
    if (p.row) previous.set(row.id, { tx: p.row.record, is_reorg_resend: p.row.is_reorg_resend, orphaned: p.row.orphaned });
    written.push(s);
    changed.push(s);
    return s;
  });

  const updatedIds = new Set(updated.filter((r) => !r.inserted).map((r) => r.id));
  await writeIndex(trx, network, written, updatedIds, opts);

  let orphaned: StoredTx[] = [];
  if (replacedBlocks.length) {
    const res = await trx.raw<{ rows: RecordReturning[] }>(ORPHAN_OLD_TXS_SQL, [source, network.network, replacedBlocks]);
    orphaned = res.rows.map((r) => toStored(network.network, r));
  }
  if (source !== null && earlierOrphans.length) {
    // A replay of the delivery that orphaned them (its publish may have been lost).
    const res = await trx.raw<{ rows: RecordReturning[] }>(REPLAYED_ORPHANS_SQL, [network.network, earlierOrphans, source]);
    orphaned.push(...res.rows.map((r) => toStored(network.network, r)));
  }
  return { stored, orphaned, replacedBlocks, inserted: inserted.length + updated.length - updatedIds.size, changed, previous };
}

interface StoredRow extends RecordReturning {
  block_hash: string | null;
  changed_by: string | null;
}

/** The stored rows of these transactions, locked, by hash (one indexed read; none on a first store). */
async function storedRows(trx: Knex.Transaction, network: NetworkInfo, txs: NormalizedTx[]): Promise<Map<string, StoredRow>> {
  if (!txs.length) return new Map();
  const { rows } = await trx.raw<{ rows: StoredRow[] }>(SELECT_STORED_TXS_SQL, [network.chainType, network.chainId, txs.map((t) => t.tx_hash)]);
  return new Map(rows.map((r) => [r.tx_hash, r]));
}

type WritePlan = { write: NormalizedTx; row?: StoredRow } | { write: null; row: StoredRow };

/**
 * What storeBlock writes for one delivered transaction: the record as delivered when there is no
 * row or the row is in another block (a reorg); else the merge of the stored and the delivered
 * record, or nothing when that adds nothing (and the row is not coming back from orphaned).
 */
function planWrite(row: StoredRow | undefined, tx: NormalizedTx): WritePlan {
  // Gone since the insert found it (a concurrent delete): the upsert writes it as new.
  if (!row) return { write: tx };
  const sameBlock = row.block_hash === null || tx.block_hash === null || row.block_hash === tx.block_hash;
  if (!sameBlock) return { write: tx, row };
  // A delivery that does not name its block never moves the row (the upsert keeps its placement).
  const { block_hash, height, tx_index, tx_time } = row.record;
  const delivered = tx.block_hash === null && row.block_hash !== null ? { ...tx, block_hash, height, tx_index, tx_time } : tx;
  const { record, changed } = mergeInto(row.record, delivered);
  const comesBack = row.orphaned && tx.block_hash !== null;
  return changed || comesBack ? { write: record, row } : { write: null, row };
}

/** One DB transaction; a failure comes out as a compact StoreDbError (never the statement text). */
async function inTransaction<T>(db: Knex, work: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
  try {
    return await db.transaction(work);
  } catch (err) {
    throw compactDbError(err);
  }
}

/** `leading`: bind values of the statement that come before the row arrays. */
async function upsertTransactions(trx: Knex.Transaction, rows: TxRowValues[], sql: string, opts: StoreOptions, leading: Knex.RawBinding[]): Promise<TxReturning[]> {
  if (!rows.length) return [];
  // Rows in hash order: concurrent writers then lock shared rows in the same order (no deadlock).
  const sorted = [...rows].sort((a, b) => (a[3] < b[3] ? -1 : a[3] > b[3] ? 1 : 0));
  const out: TxReturning[] = [];
  for (const part of chunkRows(sorted, TX_INSERT_COLUMNS.length, opts.maxParamsPerStatement)) {
    // knex's binding type has no arrays holding nulls; pg sends those elements as NULL.
    const res = await trx.raw<{ rows: TxReturning[] }>(sql, [...leading, ...(txRowArrays(part) as Knex.RawBinding[])]);
    out.push(...res.rows);
  }
  return out;
}

/**
 * Index rows mirror the stored records: tx.address_index (one row per address, with the tokens it
 * moved and the record's transfer_type) and tx.address_token_index (one row per address and token
 * moved). For rows that existed, the addresses and (address, token) pairs they lost are removed
 * first (the token rows while the old `tokens` arrays still say which exist).
 */
async function writeIndex(trx: Knex.Transaction, network: NetworkInfo, stored: StoredTx[], updatedIds: Set<string>, opts: StoreOptions): Promise<void> {
  const rows: IndexRowValues[] = [];
  for (const s of stored) rows.push(...indexRowValues(network, s.id, s.tx));
  // Rows of transactions inserted by this DB transaction cannot exist yet: plain inserts.
  const keep = updatedIds.size ? rows.filter((r) => updatedIds.has(r[3])) : [];
  const fresh = updatedIds.size ? rows.filter((r) => !updatedIds.has(r[3])) : rows;
  if (updatedIds.size) {
    const ids = [...updatedIds];
    const keepTokens = tokenIndexRowValues(keep);
    const { rows: stale } = await trx.raw<{ rows: StaleTokenRow[] }>(DELETE_STALE_INDEX_SQL, [
      ids,
      keepTokens.map((r) => r[4]),
      keepTokens.map((r) => r[0]),
      keepTokens.map((r) => r[1]),
      ids,
      keep.map((r) => r[3]),
      keep.map((r) => r[0]),
    ]);
    if (stale.length) {
      await trx.raw(DELETE_TOKEN_INDEX_ROWS_SQL, [
        stale.map((r) => r.address),
        stale.map((r) => r.token),
        stale.map((r) => r.chain_type),
        stale.map((r) => r.chain_id),
        stale.map((r) => r.tx_id),
      ]);
    }
  }
  for (const [sql, list] of [
    [UPSERT_INDEX_SQL, keep],
    [INSERT_INDEX_SQL, fresh],
  ] as const) {
    for (const part of chunkRows(list, INDEX_INSERT_COLUMNS.length, opts.maxParamsPerStatement)) {
      await trx.raw(sql, indexRowArrays(part) as Knex.RawBinding[]);
    }
  }
}

interface StaleTokenRow {
  address: string;
  token: string;
  chain_type: string;
  chain_id: number;
  tx_id: string;
}
