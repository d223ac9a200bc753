import type { Knex } from 'knex';

/**
 * Refunds sent by the platform and the resolution of ManualReview orders: `refund_tx_hash` is the
 * transaction that gave a failed swap's deposit back to its refund address; `resolution` is an
 * operator's decision on a ManualReview order (refund it in full, or execute it as a paid
 * order), written once.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.withSchema('agg').alterTable('orders', (t) => {
    t.string('refund_tx_hash', 128).nullable();
    t.string('resolution', 16).nullable();
  });
  await knex.raw("alter table agg.orders add constraint orders_resolution_check check (resolution in ('refund', 'execute'))");
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.withSchema('agg').alterTable('orders', (t) => {
    t.dropColumn('resolution');
    t.dropColumn('refund_tx_hash');
  });
}
