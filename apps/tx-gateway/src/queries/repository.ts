import type { Knex } from '@chainpipe/db';
import type { NetworkInfo } from '@chainpipe/chains';
import type { StoredRecord } from './format';
import type { HistoryQuery } from './request';

/**
 * Reads of the history queries (schema `tx`, migration 20261121010000_tx_schema).
 *
 * Every history page is one statement: for each (address, chain) key a LATERAL keyset walk of
 * `tx.address_index` newest first, stopping after `limit` live (not orphaned, filter-matching)
 * rows; the walks are merged, de-duplicated (two keys may share a transaction) and cut to
 * `limit`; only then are the (at most `limit`) records read. Which index a walk uses:
 * - address + chain_type + chain_id: the primary key (address, chain_type, chain_id, tx_id),
 *   backwards from the cursor;
 * - address with a partial chain filter or none: address_index_addr_tx_idx (address, tx_id desc),
 *   the chain filter applied on the way. The walk stays in tx_id order either way, so the cost
 *   is the rows skipped by filters, never the depth of the page (no OFFSET).
 * The SQL text is built from fixed fragments only; every value is a binding.
 */
export class TxQueryRepository {
  constructor(private readonly db: Knex) {}

  async history(q: HistoryQuery): Promise<StoredRecord[]> {
    if (q.keys.length === 0) return [];
    const { sql, bindings } = historySql(q);
    const { rows } = await this.db.raw<{ rows: StoredRecord[] }>(sql, bindings);
    return rows;
  }

  /** Live records of one network by hash, in the order of `hashes` (missing ones skipped). */
  async byHashes(network: NetworkInfo, hashes: string[]): Promise<StoredRecord[]> {
    if (hashes.length === 0) return [];
    const rows: (StoredRecord & { tx_hash: string })[] = await this.db('tx.transactions')
      .select('id', 'is_reorg_resend', 'record', 'tx_hash')
      .where({ chain_type: network.chainType, chain_id: network.chainId, orphaned: false })
      .whereIn('tx_hash', hashes);
    const byHash = new Map(rows.map((r) => [r.tx_hash, r]));
    return hashes.flatMap((h) => {
      const r = byHash.get(h);
      return r ? [{ id: r.id, is_reorg_resend: r.is_reorg_resend, record: r.record }] : [];
    });
  }

  async byHash(network: NetworkInfo, hash: string): Promise<StoredRecord | undefined> {
    const [row] = await this.byHashes(network, [hash]);
    return row;
  }
}

/** Exported for the EXPLAIN checks of the benchmark; callers use `TxQueryRepository.history`. */
export function historySql(q: HistoryQuery): { sql: string; bindings: Knex.RawBinding[] } {
  const exact = q.keys.every((k) => k.chainType !== null && k.chainId !== null);
  const bindings: Knex.RawBinding[] = [];
  let keySource: string;
  const walk: string[] = [];
  if (exact) {
    keySource = 'unnest(?::text[], ?::text[], ?::int[]) as k(address, chain_type, chain_id)';
    bindings.push(
      q.keys.map((k) => k.address),
      q.keys.map((k) => k.chainType as string),
      q.keys.map((k) => k.chainId as number),
    );
    walk.push('ai.address = k.address', 'ai.chain_type = k.chain_type', 'ai.chain_id = k.chain_id');
  } else {
    // Search keys share their chain filter: they are forms of one address.
    keySource = 'unnest(?::text[]) as k(address)';
    bindings.push(q.keys.map((k) => k.address));
    walk.push('ai.address = k.address');
    const { chainType, chainId } = q.keys[0];
    if (chainType !== null) {
      walk.push('ai.chain_type = ?');
      bindings.push(chainType);
    }
    if (chainId !== null) {
      walk.push('ai.chain_id = ?');
      bindings.push(chainId);
    }
  }
  if (q.beforeId !== null) {
    walk.push('ai.tx_id < ?::bigint');
    bindings.push(q.beforeId);
  }
  walk.push('not t.orphaned');
  if (q.transferType !== null) {
    walk.push("t.record->>'transfer_type' = ?");
    bindings.push(q.transferType);
  }
  if (q.tokens !== null) {
    walk.push('ai.tokens && ?::text[]');
    bindings.push(q.tokens);
  }
  bindings.push(q.limit, q.limit);
  const sql = `
    select t.id, t.is_reorg_resend, t.record
    from (
      select distinct h.tx_id
      from ${keySource}
      cross join lateral (
        select ai.tx_id
        from tx.address_index ai
        join tx.transactions t on t.id = ai.tx_id
        where ${walk.join(' and ')}
        order by ai.tx_id desc
        limit ?
      ) h
      order by h.tx_id desc
      limit ?
    ) page
    join tx.transactions t on t.id = page.tx_id
    order by t.id desc`;
  return { sql, bindings };
}
