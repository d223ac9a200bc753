import { StatementCache, type Knex } from '@chainpipe/db';
import type { ChainType, NetworkInfo } from '@chainpipe/chains';
import type { TransferType } from '@chainpipe/tx-parsers';
import type { StoredRecord } from '@chainpipe/tx-records';

/** One address to look up, optionally restricted to a chain type and/or chain id. */
export interface AddressKey {
  address: string;
  chainType: ChainType | null;
  chainId: number | null;
}

export interface HistoryFilters {
  /** `transfer_type` to match; null = any. */
  transferType: TransferType | null;
  /** Token contract forms (one per chain family the search spans); null = no token filter. */
  tokens: string[] | null;
  limit: number;
  /** Return transactions with an id below this (decimal string: ids are bigints); null = newest. */
  beforeId: string | null;
}

/** A history page to read: what tx-gateway's request normalisation makes of a query's body. */
export interface HistoryQuery extends HistoryFilters {
  /** Every (address form, chain) to merge; one keyset walk per key, merged newest first. */
  keys: AddressKey[];
}

/**
 * Reads of the history queries (schema `tx`, migrations 20261121010000_tx_schema and
 * 20261121020000_address_index_filters).
 *
 * A history page is one statement (two when chains must be found first, see below): for each key
 * (address form, chain[, token form]) a LATERAL keyset walk of an index whose order is the page's
 * (tx_id, newest first), starting below the cursor and stopping after `limit` live (not orphaned)
 * rows; the walks are merged, de-duplicated (two keys may share a transaction) and cut to
 * `limit`; only then are the (at most `limit`) records read. Every filter is an equality on a
 * leading column of the walked index, so a walk never reads a row it then throws away (orphaned
 * ones aside): the cost is keys × `limit` index entries, whatever the depth of the page (no
 * OFFSET) and however little the filters match. The walks:
 * - no filter, all chains: address_index_addr_tx_idx (address, tx_id desc), one walk per form;
 * - no filter, one chain: the primary key (address, chain_type, chain_id, tx_id), backwards;
 * - `tx_type`: address_index_type_idx (address, chain_type, chain_id, transfer_type, tx_id desc);
 * - `token`: tx.address_token_index's primary key (address, token, chain_type, chain_id, tx_id),
 *   backwards; with `tx_type` too, address_token_type_idx (…, transfer_type, tx_id desc).
 * The last three walk one chain at a time. When the request does not name one exact chain but
 * needs them (a filter, or chain_type or chain_id alone), a first statement finds the chains the
 * address forms have rows on (a skip scan: one index probe per chain, however long the history)
 * that pass the chain filter; they become the exact keys of the second. Two statements rather
 * than a CTE: with the chains as a bound array the planner knows how many walks there are (a
 * recursive CTE's guess multiplied the estimated cost past the JIT threshold, which cost 20 to 40
 * ms of compilation per page).
 * The SQL text is built from fixed fragments only; every value is a binding.
 */
export class TxQueryRepository implements TxQueries {
  /** The history statements: texts of fixed fragments, one per query shape. */
  private readonly statements: StatementCache;

  constructor(private readonly db: Knex) {
    this.statements = new StatementCache(db);
  }

  async history(q: HistoryQuery): Promise<StoredRecord[]> {
    if (q.keys.length === 0) return [];
    let query = q;
    const chains = chainsSql(q);
    if (chains) {
      const rows = await this.statements.rows<ChainKeyRow>(chains.sql, chains.bindings);
      if (rows.length === 0) return [];
      query = withChainKeys(q, rows);
    }
    const { sql, bindings } = historySql(query);
    return this.statements.rows<StoredRecord>(sql, bindings);
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

/** What the gateway's query use-cases and its WebSocket push read: the repository's reads. */
export interface TxQueries {
  history(q: HistoryQuery): Promise<StoredRecord[]>;
  byHashes(network: NetworkInfo, hashes: string[]): Promise<StoredRecord[]>;
  byHash(network: NetworkInfo, hash: string): Promise<StoredRecord | undefined>;
}

/** A row of `chainsSql`: one address form on one chain it has index rows on. */
export interface ChainKeyRow {
  address: string;
  chain_type: string;
  chain_id: number;
}

const isExact = (q: HistoryQuery) => q.keys.every((k) => k.chainType !== null && k.chainId !== null);

/**
 * The first statement of a history page, or null when the page needs none: the keys name exact
 * chains already, or nothing is filtered and no chain either (one walk per form spans chains).
 * Otherwise (search keys are forms of one address and share their chain filter) the
 * (address, chain_type, chain_id) pairs the forms have rows on, by a recursive skip scan of an
 * index led by (address, chain_type, chain_id), each step one probe for the first pair above the
 * previous one, kept when they pass the chain filter.
 */
export function chainsSql(q: HistoryQuery): { sql: string; bindings: Knex.RawBinding[] } | null {
  if (q.keys.length === 0 || isExact(q)) return null;
  const { chainType, chainId } = q.keys[0];
  const filtered = q.transferType !== null || q.tokens !== null;
  if (!filtered && chainType === null && chainId === null) return null;
  const bindings: Knex.RawBinding[] = [q.keys.map((k) => k.address)];
  const chainFilter: string[] = [];
  if (chainType !== null) {
    chainFilter.push('c.chain_type = ?');
    bindings.push(chainType);
  }
  if (chainId !== null) {
    chainFilter.push('c.chain_id = ?');
    bindings.push(chainId);
  }
  const sql = `with recursive chains(address, chain_type, chain_id) as (
      select f.address, lowest.chain_type, lowest.chain_id
      from unnest(?::text[]) as f(address)
      cross join lateral (
        select ai.chain_type, ai.chain_id from tx.address_index ai
        where ai.address = f.address
        order by ai.chain_type, ai.chain_id
        limit 1
      ) lowest
      union all
      select c.address, above.chain_type, above.chain_id
      from chains c
      cross join lateral (
        select ai.chain_type, ai.chain_id from tx.address_index ai
        where ai.address = c.address and (ai.chain_type, ai.chain_id) > (c.chain_type, c.chain_id)
        order by ai.chain_type, ai.chain_id
        limit 1
      ) above
    )
    select c.address, c.chain_type, c.chain_id from chains c${chainFilter.length ? `\n    where ${chainFilter.join(' and ')}` : ''}`;
  return { sql, bindings };
}

/** The query with the chains found by `chainsSql` as its (exact) keys. */
export function withChainKeys(q: HistoryQuery, rows: readonly ChainKeyRow[]): HistoryQuery {
  return { ...q, keys: rows.map((r) => ({ address: r.address, chainType: r.chain_type as ChainType, chainId: r.chain_id })) };
}

/**
 * The statement of a history page whose keys are exact (or span chains unfiltered): see
 * `TxQueryRepository`. Exported for the EXPLAIN checks of the benchmark; callers use
 * `TxQueryRepository.history`.
 */
export function historySql(q: HistoryQuery): { sql: string; bindings: Knex.RawBinding[] } {
  const bindings: Knex.RawBinding[] = [];
  const exact = isExact(q);
  if (!exact && chainsSql(q) !== null) throw new Error('historySql: find the chains first (chainsSql, withChainKeys)');
  let keySource: string;
  const walk = ['w.address = k.address'];
  if (exact) {
    keySource = 'unnest(?::text[], ?::text[], ?::int[]) as k(address, chain_type, chain_id)';
    bindings.push(
      q.keys.map((k) => k.address),
      q.keys.map((k) => k.chainType as string),
      q.keys.map((k) => k.chainId as number),
    );
    walk.push('w.chain_type = k.chain_type', 'w.chain_id = k.chain_id');
  } else {
    keySource = 'unnest(?::text[]) as k(address)';
    bindings.push(q.keys.map((k) => k.address));
  }
  if (q.tokens !== null) {
    keySource += ' cross join unnest(?::text[]) as tok(token)';
    bindings.push(q.tokens);
    walk.push('w.token = tok.token');
  }
  if (q.transferType !== null) {
    walk.push('w.transfer_type = ?');
    bindings.push(q.transferType);
  }
  if (q.beforeId !== null) {
    walk.push('w.tx_id < ?::bigint');
    bindings.push(q.beforeId);
  }
  // A subquery per walked row, never a join: a join lets the planner pick a merge join that walks
  // tx.transactions from the newest id down until the key's rows turn up (the whole table, for
  // a key with few rows). A transaction that is missing or orphaned fails the test alike.
  walk.push('not (select t.orphaned from tx.transactions t where t.id = w.tx_id)');
  bindings.push(q.limit, q.limit);
  const sql = `
    select t.id, t.is_reorg_resend, t.record
    from (
      select distinct h.tx_id
      from ${keySource}
      cross join lateral (
        select w.tx_id
        from ${q.tokens !== null ? 'tx.address_token_index' : 'tx.address_index'} w
        where ${walk.join(' and ')}
        order by w.tx_id desc
        limit ?
      ) h
      order by h.tx_id desc
      limit ?
    ) page
    join tx.transactions t on t.id = page.tx_id
    order by t.id desc`;
  return { sql, bindings };
}
