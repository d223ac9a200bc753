import { INDEX_INSERT_COLUMNS, TX_INSERT_COLUMNS } from './rows';

/**
 * SQL texts of the write path: fixed texts, every value a bind parameter (rows travel as one
 * array per column, see `txRowArrays` and `indexRowArrays`). `t` is the stored row, `excluded` the incoming one (ON CONFLICT DO UPDATE
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
 * The incoming transaction rows of an upsert, from the arrays of `txRowArrays`: one array per
 * column and the records as one JSON array, zipped in order by ROWS FROM (no join, so the rows
 * are written, and their locks taken, in the order given). Ten parameters whatever the number
 * of rows: Postgres parses and plans no VALUES list of thousands of placeholders.
 */
const TX_ROWS = `SELECT * FROM ROWS FROM (
  unnest(?::text[]), unnest(?::int[]), unnest(?::text[]), unnest(?::text[]), unnest(?::text[]),
  unnest(?::bigint[]), unnest(?::int[]), unnest(?::bigint[]), unnest(?::text[]), jsonb_array_elements(?::jsonb)
) AS r(${TX_INSERT_COLUMNS.join(', ')})`;

/**
 * storeBlock's first statement: the transactions that have no row yet, as they are (the whole
 * work of a first store). Rows that exist are left alone here (no lock, no write) and returned
 * by nothing: storeBlock reads them next and merges.
 */
export const INSERT_NEW_BLOCK_TXS_SQL = `INSERT INTO tx.transactions AS t (changed_by, ${TX_INSERT_COLUMNS.join(', ')})
SELECT ?::text, r.* FROM (${TX_ROWS}) AS r
ON CONFLICT (chain_type, chain_id, tx_hash) DO NOTHING
RETURNING id, tx_hash, tx_status, block_hash, height, tx_index, tx_time, orphaned, is_reorg_resend, true AS inserted`;

/**
 * storeBlock's upsert of the rows a delivery changes (new ones, and stored ones its merged record
 * or its block changes). Moved rows (stored in another block, or orphaned, and now seen in a
 * block) become reorg resends; the flag is persisted so a replay of the block answers the same.
 * `changed_by` (first parameter) names the delivery that wrote the row last.
 */
export const UPSERT_BLOCK_TXS_SQL = `INSERT INTO tx.transactions AS t (changed_by, ${TX_INSERT_COLUMNS.join(', ')})
SELECT ?::text, r.* FROM (${TX_ROWS}) AS r
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
  changed_by = excluded.changed_by,
  updated_at = now()
RETURNING id, tx_hash, tx_status, block_hash, height, tx_index, tx_time, orphaned, is_reorg_resend, (xmax = 0) AS inserted`;

/**
 * What is stored of a block's transactions before storeBlock writes them: the records it merges
 * the delivery into. The rows are locked in hash order, the order every writer of tx.transactions
 * locks them in, so a block-less delivery (an origin's answer) racing a block waits instead of interleaving.
 */
export const SELECT_STORED_TXS_SQL = `SELECT id, tx_hash, block_hash, orphaned, is_reorg_resend, changed_by, record
FROM tx.transactions
WHERE chain_type = ? AND chain_id = ? AND tx_hash = ANY(?::text[])
ORDER BY tx_hash
FOR UPDATE`;

/**
 * Address index rows and their token index rows, in one statement from one set of arrays (one
 * array per INDEX_INSERT_COLUMNS column, `tokens` as JSON arrays: Postgres has no arrays of
 * arrays of different lengths), so the token rows are exactly those of the address rows: one per
 * (address, token in its `tokens`, chain, transaction), with the same transfer_type. Six
 * parameters whatever the number of rows (arrays also spare Postgres the parse and plan of a
 * VALUES list with thousands of placeholders). `upsert`: rows that may exist already (a replay
 * rewrites nothing: the WHEREs skip identical rows; a changed record updates tokens and type);
 * without it, plain inserts (see INSERT_INDEX_SQL).
 */
function indexWriteSql(upsert: boolean): string {
  return `WITH v AS (
  SELECT u.address, u.chain_type, u.chain_id, u.tx_id, u.transfer_type,
    CASE WHEN u.tokens_json = '[]' THEN '{}'::text[] ELSE ARRAY(SELECT jsonb_array_elements_text(u.tokens_json::jsonb)) END AS tokens
  FROM unnest(?::text[], ?::text[], ?::int[], ?::bigint[], ?::text[], ?::text[]) AS u(address, chain_type, chain_id, tx_id, tokens_json, transfer_type)
), address_rows AS (
  INSERT INTO tx.address_index AS a (${INDEX_INSERT_COLUMNS.join(', ')})
  SELECT ${INDEX_INSERT_COLUMNS.map((c) => `v.${c}`).join(', ')} FROM v${
    upsert
      ? `
  ON CONFLICT (address, chain_type, chain_id, tx_id) DO UPDATE SET tokens = excluded.tokens, transfer_type = excluded.transfer_type
  WHERE (a.tokens, a.transfer_type) IS DISTINCT FROM (excluded.tokens, excluded.transfer_type)`
      : ''
  }
)
INSERT INTO tx.address_token_index AS k (address, token, chain_type, chain_id, tx_id, transfer_type)
SELECT v.address, t.token, v.chain_type, v.chain_id, v.tx_id, v.transfer_type
FROM v CROSS JOIN LATERAL unnest(v.tokens) AS t(token)${
    upsert
      ? `
ON CONFLICT (address, token, chain_type, chain_id, tx_id) DO UPDATE SET transfer_type = excluded.transfer_type
WHERE k.transfer_type IS DISTINCT FROM excluded.transfer_type`
      : ''
  }`;
}

/** Index rows of transactions that had a row before the DB transaction writing them. */
export const UPSERT_INDEX_SQL = indexWriteSql(true);

/**
 * Index rows of transactions this DB transaction inserted: their ids are new (a sequence never
 * hands one out twice), so no index row can name them yet and nothing can conflict. A plain
 * insert skips the conflict check and the speculative insertion of ON CONFLICT (one index
 * descent and one more WAL record per row: a first store of a block writes ~17% fewer WAL records).
 */
export const INSERT_INDEX_SQL = indexWriteSql(false);

/**
 * For updated transactions: deletes the index rows whose address is no longer in their record (a
 * reorg may turn a transfer into a failed call), and lists the token index rows whose
 * (address, token) pair is no longer in it, for `DELETE_TOKEN_INDEX_ROWS_SQL`. The pairs stored so
 * far are the `tokens` arrays of the address index rows (written in the same DB transactions as
 * the token rows); both parts read them as they were before this statement. Seven array
 * parameters whatever the size. Listing rather than deleting the token rows here keeps
 * tx.address_token_index out of this statement's plan: only rows known by their primary key are
 * deleted (a join here could be planned as a scan of the whole token table).
 */
export const DELETE_STALE_INDEX_SQL = `WITH stale_tokens AS (
  SELECT a.address, o.token, a.chain_type, a.chain_id, a.tx_id
  FROM tx.address_index a CROSS JOIN LATERAL unnest(a.tokens) AS o(token)
  WHERE a.tx_id = ANY(?::bigint[]) AND cardinality(a.tokens) > 0
    AND NOT EXISTS (
      SELECT 1 FROM unnest(?::bigint[], ?::text[], ?::text[]) AS n(tx_id, address, token)
      WHERE n.tx_id = a.tx_id AND n.address = a.address AND n.token = o.token
    )
), stale_addresses AS (
  DELETE FROM tx.address_index a
  WHERE a.tx_id = ANY(?::bigint[])
    AND NOT EXISTS (
      SELECT 1 FROM unnest(?::bigint[], ?::text[]) AS k(tx_id, address)
      WHERE k.tx_id = a.tx_id AND k.address = a.address
    )
)
SELECT address, token, chain_type, chain_id, tx_id FROM stale_tokens`;

/** Token index rows by primary key (the rows `DELETE_STALE_INDEX_SQL` listed). Five array parameters. */
export const DELETE_TOKEN_INDEX_ROWS_SQL = `DELETE FROM tx.address_token_index k
USING unnest(?::text[], ?::text[], ?::text[], ?::int[], ?::bigint[]) AS s(address, token, chain_type, chain_id, tx_id)
WHERE k.address = s.address AND k.token = s.token AND k.chain_type = s.chain_type AND k.chain_id = s.chain_id AND k.tx_id = s.tx_id`;

/** Serialises every writer of one (network, height): replays and racing consumers queue here. */
export const BLOCK_LOCK_SQL = 'SELECT pg_advisory_xact_lock(hashtext(?))';

/**
 * The canonical blocks this height had under another hash, which lose their place
 * (`replaced`), and the ones orphaned before (the statement's snapshot predates its update).
 */
export const ORPHAN_OLD_BLOCKS_SQL = `WITH replaced AS (
  UPDATE tx.blocks SET orphaned = true
  WHERE network = ? AND height = ? AND hash <> ? AND orphaned = false
  RETURNING hash
)
SELECT hash, true AS replaced FROM replaced
UNION ALL
SELECT hash, false AS replaced FROM tx.blocks WHERE network = ? AND height = ? AND hash <> ? AND orphaned`;

export const UPSERT_BLOCK_SQL = `INSERT INTO tx.blocks AS b (network, height, hash, parent_hash, block_time, tx_count)
VALUES (?, ?, ?, ?, ?, ?)
ON CONFLICT (network, height, hash) DO UPDATE SET
  orphaned = false,
  parent_hash = coalesce(excluded.parent_hash, b.parent_hash),
  block_time = coalesce(excluded.block_time, b.block_time),
  tx_count = greatest(excluded.tx_count, b.tx_count)
RETURNING (xmax = 0) AS inserted`;

/** Transactions still placed in an orphaned block (the ones the new block did not take over). */
export const ORPHAN_OLD_TXS_SQL = `UPDATE tx.transactions SET orphaned = true, changed_by = ?, updated_at = now()
WHERE network = ? AND block_hash = ANY(?::text[]) AND orphaned = false
RETURNING id, tx_hash, orphaned, is_reorg_resend, record`;

/** Transactions a delivery orphaned before, in blocks orphaned before: a replay of it publishes them again. */
export const REPLAYED_ORPHANS_SQL = `SELECT id, tx_hash, orphaned, is_reorg_resend, record FROM tx.transactions
WHERE network = ? AND block_hash = ANY(?::text[]) AND orphaned AND changed_by = ?
ORDER BY id`;
