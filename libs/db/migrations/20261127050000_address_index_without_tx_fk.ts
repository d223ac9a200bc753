import type { Knex } from 'knex';

/**
 * `tx.address_index.tx_id` no longer references `tx.transactions(id)`. Nothing deletes
 * transactions (an orphaned one keeps its row and its index rows, see docs/decisions.md, "Address
 * monitoring: storage and reorgs"), so the cascade never ran; and the check cost a trigger call
 * with a `FOR KEY SHARE` look-up of the transaction per index row, about a third of the index
 * upsert's time on a 125-transaction block. The index rows are written in the DB transaction of
 * their transaction's row, by tx-store alone. `address_index_tx_idx (tx_id)` stays: the stale-row
 * delete of a rewritten transaction walks it.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table tx.address_index drop constraint if exists address_index_tx_id_foreign');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table tx.address_index add constraint address_index_tx_id_foreign foreign key (tx_id) references tx.transactions (id) on delete cascade');
}
