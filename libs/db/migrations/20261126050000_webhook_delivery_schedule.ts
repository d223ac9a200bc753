import type { Knex } from 'knex';

/**
 * Webhook delivery without a transaction around the POST, scheduled per application:
 * - `tx.app_configs.webhook_next_attempt_at` (Unix ms): when the application's queue is next due;
 *   null when nothing is queued or the queue is parked (webhook off or disabled, configuration
 *   inactive, no URL). One row per application, and an index in that order, so the scheduler
 *   takes the most overdue applications first and never sees parked ones. It replaces the
 *   per-row `tx.webhook_queue.next_attempt_at` (every row of a queue shared one value).
 * - `tx.webhook_attempts`: every POST made (time, batch size, status or error, latency, the
 *   next retry it scheduled), for GET /tx/api/v1/app/webhook/attempts.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.withSchema('tx').alterTable('app_configs', (t) => {
    t.bigInteger('webhook_next_attempt_at');
  });
  await knex.raw(
    `update tx.app_configs c set webhook_next_attempt_at = q.next
       from (select app_id, min(next_attempt_at) as next from tx.webhook_queue group by app_id) q
      where q.app_id = c.app_id and c.enable_webhook and c.is_active and c.webhook_url is not null`,
  );
  await knex.raw('create index app_configs_webhook_due_idx on tx.app_configs (webhook_next_attempt_at) where webhook_next_attempt_at is not null');
  await knex.raw('drop index if exists tx.webhook_queue_due_idx');
  await knex.schema.withSchema('tx').alterTable('webhook_queue', (t) => {
    t.dropColumn('next_attempt_at');
  });

  await knex.schema.withSchema('tx').createTable('webhook_attempts', (t) => {
    t.bigIncrements('id').primary();
    t.string('app_id', 64).notNullable().references('app_id').inTable('core.apps').onDelete('CASCADE');
    t.bigInteger('attempted_at').notNullable();
    t.string('path', 8).notNullable();
    t.integer('transactions').notNullable();
    t.boolean('delivered').notNullable();
    t.integer('status_code');
    t.text('error');
    t.integer('latency_ms').notNullable();
    t.bigInteger('next_retry_at');
    t.index(['app_id', 'id'], 'webhook_attempts_app_idx');
    t.index(['attempted_at'], 'webhook_attempts_age_idx');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.withSchema('tx').dropTable('webhook_attempts');
  await knex.schema.withSchema('tx').alterTable('webhook_queue', (t) => {
    t.bigInteger('next_attempt_at').notNullable().defaultTo(0);
  });
  await knex.raw(`update tx.webhook_queue q set next_attempt_at = coalesce(c.webhook_next_attempt_at, 0) from tx.app_configs c where c.app_id = q.app_id`);
  await knex.raw('create index webhook_queue_due_idx on tx.webhook_queue (app_id, next_attempt_at)');
  await knex.raw('drop index if exists tx.app_configs_webhook_due_idx');
  await knex.schema.withSchema('tx').alterTable('app_configs', (t) => {
    t.dropColumn('webhook_next_attempt_at');
  });
}
