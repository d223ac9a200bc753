import type { Knex } from 'knex';

/**
 * Webhook queue rows remember the push they came from: its message id is the `webhook-id` of a
 * single-transaction POST and part of the id of a retried batch, so a batch sent twice carries
 * the same id. Rows are drained in `id` order per application.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.withSchema('tx').alterTable('webhook_queue', (t) => {
    t.string('message_id', 64);
  });
  await knex.raw('create index webhook_queue_app_order_idx on tx.webhook_queue (app_id, id)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists tx.webhook_queue_app_order_idx');
  await knex.schema.withSchema('tx').alterTable('webhook_queue', (t) => {
    t.dropColumn('message_id');
  });
}
