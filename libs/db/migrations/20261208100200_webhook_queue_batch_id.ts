import type { Knex } from 'knex';

/**
 * A queued transaction remembers the `webhook-id` of the POST that carried it (null while none
 * did): a retry sends those transactions together again, as that POST did, under the same id, so
 * the same content keeps its id across the live send, retries and replays.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.withSchema('tx').alterTable('webhook_queue', (t) => {
    t.text('batch_id');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.withSchema('tx').alterTable('webhook_queue', (t) => {
    t.dropColumn('batch_id');
  });
}
