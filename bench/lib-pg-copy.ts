import type pg from 'pg';
import { copyFromStdin } from '@chainpipe/db';
import type { NetworkInfo } from '@chainpipe/chains';
import type { ParsedBlock } from '@chainpipe/tx-parsers';
import { INDEX_INSERT_COLUMNS, TX_INSERT_COLUMNS, indexRowValues, tokenIndexRowValues, txRowValues, type IndexRowValues } from '@chainpipe/tx-store';

/** `COPY … FROM STDIN` of rows as CSV, over the project's copyFromStdin. Bench baseline only. */

export type CopyValue = string | number | null | readonly string[];

/** A Postgres array literal: `{"a","b"}` (elements quoted, `"` and `\` escaped). */
function arrayLiteral(items: readonly string[]): string {
  return `{${items.map((s) => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`).join(',')}}`;
}

/** One CSV field: NULL is an empty unquoted field, every other value is quoted ("" doubles ``"``). */
function csvField(v: CopyValue): string {
  if (v === null) return '';
  const text = typeof v === 'number' ? String(v) : typeof v === 'string' ? v : arrayLiteral(v);
  return `"${text.replace(/"/g, '""')}"`;
}

export function csvRows(rows: readonly (readonly CopyValue[])[]): string {
  let out = '';
  for (const r of rows) out += r.map(csvField).join(',') + '\n';
  return out;
}

/** Runs `COPY <table> (<columns>) FROM STDIN (FORMAT csv)` with `rows`; resolves with the row count. */
export async function copyFrom(client: pg.Client, table: string, columns: readonly string[], rows: readonly (readonly CopyValue[])[]): Promise<number> {
  return copyFromStdin(client, `COPY ${table} (${columns.join(', ')}) FROM STDIN WITH (FORMAT csv)`, Buffer.from(csvRows(rows)));
}

/**
 * The raw baseline of storing one parsed block: one transaction, ids from the sequence, then
 * `COPY … FROM STDIN` of the block row, the transactions and their address and token index rows,
 * the rows storeBlock writes for a new block, built by the same row functions. No lock, no
 * conflict handling, no reorg check, nothing read back. Returns the transactions copied.
 */
export async function copyBlock(client: pg.Client, network: NetworkInfo, b: ParsedBlock): Promise<number> {
  await client.query('BEGIN');
  try {
    const ids = await client.query<{ id: string }>("SELECT nextval('tx.transactions_id_seq') AS id FROM generate_series(1, $1)", [b.transactions.length]);
    const txRows: CopyValue[][] = [];
    const indexRows: IndexRowValues[] = [];
    b.transactions.forEach((tx, i) => {
      const id = ids.rows[i].id;
      txRows.push([id, ...txRowValues(network, tx)]);
      indexRows.push(...indexRowValues(network, id, tx));
    });
    await copyFrom(client, 'tx.blocks', ['network', 'height', 'hash', 'parent_hash', 'block_time', 'tx_count'], [[network.network, b.block.height, b.block.hash, b.block.parent_hash, b.block.time, b.transactions.length]]);
    await copyFrom(client, 'tx.transactions', ['id', ...TX_INSERT_COLUMNS], txRows);
    await copyFrom(client, 'tx.address_index', INDEX_INSERT_COLUMNS, indexRows);
    const tokenRows = tokenIndexRowValues(indexRows);
    if (tokenRows.length) await copyFrom(client, 'tx.address_token_index', ['address', 'token', 'chain_type', 'chain_id', 'tx_id', 'transfer_type'], tokenRows);
    await client.query('COMMIT');
    return b.transactions.length;
  } catch (err) {
    await client.query('ROLLBACK');
    throw err;
  }
}
