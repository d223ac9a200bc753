import type { Knex } from 'knex';

/**
 * Transfers the platform sends from its deposit addresses (a paid order's forward to its
 * channel, the router allowance a token forward needs first, a failed order's refund, a fee
 * sweep to the treasury), each stored signed BEFORE it is broadcast: after a crash the stored
 * raw transaction is broadcast again (same hash), never signed anew with another nonce. One of
 * each kind per order (`outgoing_transfers_order_kind`), so a forward can never be sent twice.
 * `forward_tx_hash` on the order is its forward, by which the channel's status is followed.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.withSchema('agg').createTable('outgoing_transfers', (t) => {
    t.bigIncrements('id').primary();
    t.bigInteger('order_id').notNullable().references('id').inTable('agg.orders');
    t.string('kind', 16).notNullable();
    t.string('chain_type', 32).notNullable();
    t.integer('from_index').notNullable();
    t.string('from_address', 128).notNullable();
    t.string('to_address', 128).notNullable();
    t.string('asset', 128).nullable();
    t.specificType('amount', 'numeric(78,0)').notNullable();
    t.bigInteger('nonce').nullable();
    t.text('raw_tx').notNullable();
    t.string('tx_hash', 128).notNullable();
    t.string('status', 16).notNullable().defaultTo('signed');
    t.bigInteger('block_number').nullable();
    t.text('error').nullable();
    t.jsonb('detail').notNullable().defaultTo('{}');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('broadcast_at', { useTz: true }).nullable();
    t.timestamp('finished_at', { useTz: true }).nullable();
    t.unique(['order_id', 'kind'], { indexName: 'outgoing_transfers_order_kind' });
    t.unique(['chain_type', 'tx_hash'], { indexName: 'outgoing_transfers_tx_hash' });
  });
  await knex.raw("alter table agg.outgoing_transfers add constraint outgoing_transfers_kind check (kind in ('forward', 'approve', 'refund', 'sweep'))");
  await knex.raw("alter table agg.outgoing_transfers add constraint outgoing_transfers_status check (status in ('signed', 'broadcast', 'confirmed', 'failed'))");
  await knex.raw("create index outgoing_transfers_open on agg.outgoing_transfers (id) where status in ('signed', 'broadcast')");
  await knex.schema.withSchema('agg').alterTable('orders', (t) => {
    t.string('forward_tx_hash', 128).nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.withSchema('agg').alterTable('orders', (t) => {
    t.dropColumn('forward_tx_hash');
  });
  await knex.schema.withSchema('agg').dropTable('outgoing_transfers');
}
