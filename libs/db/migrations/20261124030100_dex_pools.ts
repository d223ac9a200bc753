import type { Knex } from 'knex';

/**
 * DEX pools whose trades are kept (the latest 100 per pool, in Redis) for
 * GET /tx/api/v1/dex-pools/{poolAddress}/trades. Registered through POST /tx/api/v1/dex-pools;
 * addresses in the stored (canonical) form of their chain.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.withSchema('tx').createTable('dex_pools', (t) => {
    t.string('chain_type', 32).notNullable();
    t.integer('chain_id').notNullable();
    t.string('pool_address', 130).notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['chain_type', 'chain_id', 'pool_address']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.withSchema('tx').dropTableIfExists('dex_pools');
}
