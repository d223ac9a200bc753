import type { Knex } from 'knex';

/**
 * The attempts log tells what was sent: each POST's `webhook-id` and the hashes of the
 * transactions it carried, in body order (GET /tx/api/v1/app/webhook/attempts filters by them).
 * Attempts logged before have neither (null).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.withSchema('tx').alterTable('webhook_attempts', (t) => {
    t.text('webhook_id');
    t.specificType('tx_hashes', 'text[]');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.withSchema('tx').alterTable('webhook_attempts', (t) => {
    t.dropColumn('tx_hashes');
    t.dropColumn('webhook_id');
  });
}
