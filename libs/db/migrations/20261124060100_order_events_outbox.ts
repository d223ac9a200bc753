import type { Knex } from 'knex';

/**
 * The order audit is also the outbox of orders.events.v1: a change and its audit row commit
 * together, and the order tracker publishes rows not yet published, then marks them. No event
 * is lost between a commit and a publish.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.withSchema('agg').alterTable('order_audit', (t) => {
    t.timestamp('published_at', { useTz: true });
  });
  await knex.raw('create index order_audit_unpublished on agg.order_audit (id) where published_at is null');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists agg.order_audit_unpublished');
  await knex.schema.withSchema('agg').alterTable('order_audit', (t) => {
    t.dropColumn('published_at');
  });
}
