import type { Knex } from 'knex';

/**
 * A deposit address per order, owned by the platform: `deposit_index` is the derivation index of
 * the order's deposit address under the platform's key of the source chain family (taken from
 * `agg.order_deposit_index_seq`, unique, within BIP32's non-hardened range), so no two orders
 * share a deposit address and a deposit is attributed by its address alone. The channel's own
 * deposit details (its address, memo, router) are where the platform forwards the funds: the
 * `forward_*` columns. Orders created before have no index; their deposit address is the
 * channel's.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('create sequence agg.order_deposit_index_seq as integer minvalue 0 maxvalue 2147483647 start 0 no cycle');
  await knex.schema.withSchema('agg').alterTable('orders', (t) => {
    t.integer('deposit_index').nullable().unique({ indexName: 'orders_deposit_index' });
    t.string('forward_address', 128).nullable();
    t.string('forward_memo', 500).nullable();
    t.text('forward_router').nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.withSchema('agg').alterTable('orders', (t) => {
    t.dropColumn('forward_router');
    t.dropColumn('forward_memo');
    t.dropColumn('forward_address');
    t.dropColumn('deposit_index');
  });
  await knex.raw('drop sequence agg.order_deposit_index_seq');
}
