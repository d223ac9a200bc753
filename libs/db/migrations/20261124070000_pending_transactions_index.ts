import type { Knex } from 'knex';

/** The pending-compensator's once-a-minute query: pending transactions, least recently checked first. */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`create index if not exists transactions_pending_idx on tx.transactions (updated_at, id) where tx_status = 'pending' and not orphaned`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists tx.transactions_pending_idx');
}
