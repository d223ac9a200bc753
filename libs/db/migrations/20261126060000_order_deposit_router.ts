import type { Knex } from 'knex';

/**
 * The contract a token deposit of an order must go through (THORChain's router for EVM-chain
 * sources: `depositWithExpiry`); null when a plain transfer to the deposit address is the deposit.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.withSchema('agg').alterTable('orders', (t) => {
    t.text('deposit_router').nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.withSchema('agg').alterTable('orders', (t) => {
    t.dropColumn('deposit_router');
  });
}
