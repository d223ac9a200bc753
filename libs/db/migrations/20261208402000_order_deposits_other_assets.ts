import type { Knex } from 'knex';

/**
 * A deposit to an order's address in another asset than the order's source token (the wrong
 * token, the native coin of a token order): recorded with what the chain's node shows it paid
 * (docs/decisions.md#d164), so it is on the order's record like any other deposit.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.withSchema('agg').alterTable('order_deposits', (t) => {
    /** The other asset the transaction paid the address: a token contract (mint), or `native`. */
    t.string('other_asset', 128);
    t.specificType('other_amount', 'numeric(78,0)');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.withSchema('agg').alterTable('order_deposits', (t) => {
    t.dropColumn('other_asset');
    t.dropColumn('other_amount');
  });
}
