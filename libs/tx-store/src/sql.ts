import { INDEX_INSERT_COLUMNS, TX_INSERT_COLUMNS, valuesPlaceholders } from './rows';

/**
 * SQL texts of the write path. Only placeholders are generated here; every value travels as a
 * bind parameter. `t` is the stored row, `excluded` the incoming one (ON CONFLICT DO UPDATE
 * evaluates every SET expression against the row as it was before the update).
 */

const FINAL = `('success', 'failed')`;

/**
 * tx_status only moves forward: a final status (success/failed) from the incoming record wins
 * (a block is authoritative for its own transactions, a reorg may turn success into failed);
 * otherwise a stored final status stays; otherwise pending/null take the incoming value if any.
 */
const FORWARD_STATUS = `CASE
    WHEN excluded.tx_status IN ${FINAL} THEN excluded.tx_status
    WHEN t.tx_status IN ${FINAL} THEN t.tx_status
    ELSE coalesce(excluded.tx_status, t.tx_status)
  END`;

/** A record without a block hash (a getTransaction result) never moves a row out of its block. */
const KEEP_BLOCK = `(excluded.block_hash IS NULL AND t.block_hash IS NOT NULL)`;
const blockPlacement = (col: string) => `CASE WHEN ${KEEP_BLOCK} THEN t.${col} ELSE excluded.${col} END`;

/**
 * storeBlock's upsert. Moved rows (stored in another block, or orphaned, and now seen in a block)
 * become reorg resends; the flag is persisted so a replay of the block answers the same.
 */
export function upsertBlockTxsSql(rowCount: number): string {
  return `INSERT INTO tx.transactions AS t (${TX_INSERT_COLUMNS.join(', ')})
VALUES ${valuesPlaceholders(rowCount, TX_INSERT_COLUMNS.length, { 9: 'jsonb' })}
ON CONFLICT (chain_type, chain_id, tx_hash) DO UPDATE SET
  network = excluded.network,
  block_hash = ${blockPlacement('block_hash')},
  height = ${blockPlacement('height')},
  tx_index = ${blockPlacement('tx_index')},
  tx_time = ${blockPlacement('tx_time')},
  tx_status = ${FORWARD_STATUS},
  orphaned = CASE WHEN excluded.block_hash IS NULL THEN t.orphaned ELSE false END,
  is_reorg_resend = t.is_reorg_resend OR (
    excluded.block_hash IS NOT NULL AND t.block_hash IS NOT NULL AND (t.orphaned OR t.block_hash <> excluded.block_hash)
  ),
  record = excluded.record || jsonb_build_object(
    'tx_status', ${FORWARD_STATUS},
    'block_hash', ${blockPlacement('block_hash')},
    'height', ${blockPlacement('height')},
    'tx_index', ${blockPlacement('tx_index')},
    'tx_time', ${blockPlacement('tx_time')}
  ),
  updated_at = now()
RETURNING id, tx_hash, tx_status, block_hash, height, tx_index, tx_time, orphaned, is_reorg_resend, (xmax = 0) AS inserted`;
}

/** A row that sits in a block that is still canonical. */
const LIVE = `(t.block_hash IS NOT NULL AND NOT t.orphaned)`;
const loosePlacement = (col: string) => `CASE WHEN ${LIVE} THEN t.${col} ELSE excluded.${col} END`;
const LOOSE_STATUS = `CASE WHEN ${LIVE} AND t.tx_status IN ${FINAL} THEN t.tx_status ELSE ${FORWARD_STATUS} END`;

/**
 * storeLooseTransactions' upsert. A row in a live block keeps its block record and placement and
 * only takes a status step forward (pending → final); any other row becomes the incoming record
 * (status still forward only) and is no longer orphaned: the transaction exists again.
 */
export function upsertLooseTxsSql(rowCount: number): string {
  return `INSERT INTO tx.transactions AS t (${TX_INSERT_COLUMNS.join(', ')})
VALUES ${valuesPlaceholders(rowCount, TX_INSERT_COLUMNS.length, { 9: 'jsonb' })}
ON CONFLICT (chain_type, chain_id, tx_hash) DO UPDATE SET
  network = excluded.network,
  block_hash = ${loosePlacement('block_hash')},
  height = ${loosePlacement('height')},
  tx_index = ${loosePlacement('tx_index')},
  tx_time = ${loosePlacement('tx_time')},
  tx_status = ${LOOSE_STATUS},
  orphaned = false,
  record = (CASE WHEN ${LIVE} THEN t.record ELSE excluded.record END) || jsonb_build_object('tx_status', ${LOOSE_STATUS}),
  updated_at = now()
RETURNING id, tx_hash, orphaned, is_reorg_resend, record, (xmax = 0) AS inserted`;
}

/** Address index rows; a replay rewrites nothing (the WHERE skips identical rows). */
export function upsertIndexSql(rowCount: number): string {
  return `INSERT INTO tx.address_index AS a (${INDEX_INSERT_COLUMNS.join(', ')})
VALUES ${valuesPlaceholders(rowCount, INDEX_INSERT_COLUMNS.length, { 4: 'text[]' })}
ON CONFLICT (address, chain_type, chain_id, tx_id) DO UPDATE SET tokens = excluded.tokens
WHERE a.tokens IS DISTINCT FROM excluded.tokens`;
}

/**
 * Index rows of updated transactions whose address is no longer in their record (a reorg may
 * turn a transfer into a failed call). Three array parameters whatever the size.
 */
export const DELETE_STALE_INDEX_SQL = `DELETE FROM tx.address_index a
WHERE a.tx_id = ANY(?::bigint[])
  AND NOT EXISTS (
    SELECT 1 FROM unnest(?::bigint[], ?::text[]) AS k(tx_id, address)
    WHERE k.tx_id = a.tx_id AND k.address = a.address
  )`;

/** Serialises every writer of one (network, height): replays and racing consumers queue here. */
export const BLOCK_LOCK_SQL = 'SELECT pg_advisory_xact_lock(hashtext(?))';

/** The canonical blocks this height had under another hash: they lose their place. */
export const ORPHAN_OLD_BLOCKS_SQL = `UPDATE tx.blocks SET orphaned = true
WHERE network = ? AND height = ? AND hash <> ? AND orphaned = false
RETURNING hash`;

export const UPSERT_BLOCK_SQL = `INSERT INTO tx.blocks AS b (network, height, hash, parent_hash, block_time, tx_count)
VALUES (?, ?, ?, ?, ?, ?)
ON CONFLICT (network, height, hash) DO UPDATE SET
  orphaned = false,
  parent_hash = coalesce(excluded.parent_hash, b.parent_hash),
  block_time = coalesce(excluded.block_time, b.block_time),
  tx_count = excluded.tx_count
RETURNING (xmax = 0) AS inserted`;

/** Transactions still placed in an orphaned block (the ones the new block did not take over). */
export const ORPHAN_OLD_TXS_SQL = `UPDATE tx.transactions SET orphaned = true, updated_at = now()
WHERE network = ? AND block_hash = ANY(?::text[]) AND orphaned = false
RETURNING id, tx_hash, orphaned, is_reorg_resend, record`;
