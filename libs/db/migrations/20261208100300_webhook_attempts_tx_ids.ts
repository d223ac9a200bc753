import type { Knex } from 'knex';

/**
 * The attempts log keeps the ids of the transactions a POST carried (tx.transactions.id, body
 * order) instead of their hashes: a hundred bigints instead of a hundred 66-character texts a
 * row, which the live path writes for every POST (the hashes cost its throughput a tenth); a
 * listing reads the hashes by id. The few attempts logged with hashes show none.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.withSchema('tx').alterTable('webhook_attempts', (t) => {
    t.dropColumn('tx_hashes');
    t.specificType('tx_ids', 'bigint[]');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.withSchema('tx').alterTable('webhook_attempts', (t) => {
    t.dropColumn('tx_ids');
    t.specificType('tx_hashes', 'text[]');
  });
}
