import type { Knex } from 'knex';

/**
 * Deposits to an order's address as the chain node itself shows them (docs/decisions.md#d161):
 * a transaction pushed to a deposit address is stored `unverified`, and moves an order only once
 * the order-tracker has read it from the chain's node (`verified`, with the amount the node shows
 * paid to the address in the order's source token). A transaction the node does not know
 * after the verification window is `not_on_chain` (a block the chain never had); one that pays
 * the address nothing of the source token is `not_paid`. One row per order and transaction.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.withSchema('agg').createTable('order_deposits', (t) => {
    t.bigIncrements('id').primary();
    t.bigInteger('order_id').notNullable().references('id').inTable('agg.orders');
    t.string('chain_type', 32).notNullable();
    t.string('network', 64).notNullable();
    t.string('tx_hash', 128).notNullable();
    t.string('address', 128).notNullable();
    t.string('status', 16).notNullable().defaultTo('unverified');
    /** What the node shows paid to the address in the order's source token (smallest unit); null until verified. */
    t.specificType('amount', 'numeric(78,0)');
    /** The transaction's block time as the node shows it. */
    t.timestamp('tx_time', { useTz: true });
    t.timestamp('seen_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('checked_at', { useTz: true });
    t.integer('checks').notNullable().defaultTo(0);
    t.text('detail');
    t.unique(['order_id', 'tx_hash']);
  });
  await knex.raw("alter table agg.order_deposits add constraint order_deposits_status check (status in ('unverified', 'verified', 'not_on_chain', 'not_paid'))");
  await knex.raw("create index order_deposits_unverified on agg.order_deposits (id) where status = 'unverified'");
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.withSchema('agg').dropTableIfExists('order_deposits');
}
