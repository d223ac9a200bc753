import type { Knex } from 'knex';

/**
 * Retry state per queued transaction: `first_failed_at` is the failure of the POST the row was
 * in, and null for a row queued behind others that no POST carried yet (its 36 hours have not
 * started); `attempts` counts the failed POSTs that carried it. Rows queued before this keep
 * their values (their clocks run from their enqueue time, as before).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table tx.webhook_queue alter column first_failed_at drop not null');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('update tx.webhook_queue set first_failed_at = 0 where first_failed_at is null');
  await knex.raw('alter table tx.webhook_queue alter column first_failed_at set not null');
}
