import type { Knex } from 'knex';

/**
 * Index-driven `tx_type` and `token` filters of the history search (POST /transfers/search).
 *
 * Both filters used to be checked row by row while walking an address's history newest first
 * (`transfer_type` inside the jsonb record, `token` in the `tokens` array), so a filter that
 * matches little walked the whole history. Each now has an index whose order is the walk's:
 *
 * - `address_index.transfer_type`: the `transfer_type` of the transaction's stored record,
 *   denormalized (tx-store writes it with the row and rewrites it whenever the record changes).
 *   `address_index_type_idx (address, chain_type, chain_id, transfer_type, tx_id desc)` is the
 *   walk of one (address, chain) restricted to one type; searches spanning chains walk it once per
 *   chain the address has rows on (found by a skip scan of the primary key).
 * - `address_token_index`: one row per (address, token contract, chain, transaction), derived from
 *   the `tokens` arrays of `address_index` and written in the same DB transaction. Its primary key
 *   (address, token, chain_type, chain_id, tx_id) is the walk of one token; `address_token_type_idx`
 *   the walk of one token and one type (both filters at once). No foreign key: the rows are derived
 *   from address_index rows (which reference tx.transactions), readers join tx.transactions for
 *   the orphaned flag anyway, and transaction ids are never reused (a tool that truncates
 *   tx.transactions with RESTART IDENTITY must truncate this table with it).
 *
 * Existing rows are backfilled, so a database filled before this migration keeps answering the
 * same. On a large table the backfill rewrites every address_index row once: run VACUUM after.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table tx.address_index add column transfer_type text');
  await knex.raw(`update tx.address_index a set transfer_type = t.record->>'transfer_type'
    from tx.transactions t
    where t.id = a.tx_id and t.record->>'transfer_type' is not null`);
  await knex.raw('create index address_index_type_idx on tx.address_index (address, chain_type, chain_id, transfer_type, tx_id desc)');

  await knex.raw(`create table tx.address_token_index (
    address varchar(130) not null,
    token varchar(130) not null,
    chain_type varchar(32) not null,
    chain_id integer not null,
    tx_id bigint not null,
    transfer_type text,
    constraint address_token_index_pkey primary key (address, token, chain_type, chain_id, tx_id)
  )`);
  await knex.raw(`insert into tx.address_token_index (address, token, chain_type, chain_id, tx_id, transfer_type)
    select a.address, k.token, a.chain_type, a.chain_id, a.tx_id, a.transfer_type
    from tx.address_index a cross join lateral unnest(a.tokens) as k(token)
    on conflict do nothing`);
  await knex.raw('create index address_token_type_idx on tx.address_token_index (address, token, chain_type, chain_id, transfer_type, tx_id desc)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop table if exists tx.address_token_index');
  await knex.raw('drop index if exists tx.address_index_type_idx');
  await knex.raw('alter table tx.address_index drop column if exists transfer_type');
}
