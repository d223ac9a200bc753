import type { Knex } from 'knex';

/**
 * Swap channels of the aggregator (schema `agg`): one row per provider channel with the adapter
 * that speaks its API, the platform's base fee in percent and a switch; promo codes with their
 * discount in percent of that fee. Seeded with the ChangeNOW channel.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('create schema if not exists agg');
  await knex.schema.withSchema('agg').createTable('channels', (t) => {
    t.integer('id').primary();
    t.string('name', 100).notNullable();
    t.string('icon_url', 500);
    t.string('adapter_kind', 40).notNullable();
    t.specificType('base_fee_pct', 'numeric(7,4)').notNullable();
    t.boolean('enabled').notNullable().defaultTo(true);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw('alter table agg.channels add constraint channels_base_fee_range check (base_fee_pct >= 0 and base_fee_pct < 100)');
  await knex.schema.withSchema('agg').createTable('promos', (t) => {
    t.string('code', 100).primary();
    t.specificType('discount_pct', 'numeric(7,4)').notNullable();
    t.boolean('enabled').notNullable().defaultTo(true);
  });
  await knex.raw('alter table agg.promos add constraint promos_discount_range check (discount_pct > 0 and discount_pct <= 100)');
  await knex('agg.channels').insert([{ id: 1, name: 'ChangeNOW', icon_url: 'https://changenow.io/favicon.ico', adapter_kind: 'changenow', base_fee_pct: '0.3', enabled: true }]);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop table if exists agg.promos, agg.channels');
}
