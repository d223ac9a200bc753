import type { Knex } from 'knex';

/**
 * Candlestick service (schema `kline`): registered pools and their candles.
 *
 * A pool is unique per chain, address (case-insensitive) and token side. Candles of the stored
 * intervals (1s … 1d) have one row per pool, interval and open_time; besides OHLCV each row keeps
 * where its open and close came from (`open_src`, `close_src_time`, `close_src_rank`), which is
 * what makes merging updates independent of their order. Prices and volumes are the upstream's
 * floating-point USD values.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('create schema if not exists kline');
  await knex.schema.withSchema('kline').createTable('pools', (t) => {
    t.increments('id').primary();
    t.string('chain_type', 50).notNullable();
    t.bigInteger('chain_id').notNullable();
    t.string('network_id', 50).notNullable();
    t.string('pool_address', 100).notNullable();
    t.string('token', 5).notNullable().defaultTo('base');
    t.string('dex_id', 100);
    t.string('label', 100);
    t.boolean('is_active').notNullable().defaultTo(false);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw("alter table kline.pools add constraint pools_token_check check (token in ('base', 'quote'))");
  await knex.raw('create unique index pools_identity_uq on kline.pools (chain_type, chain_id, lower(pool_address), token)');
  await knex.raw('create index pools_active_idx on kline.pools (id) where is_active');
  await knex.schema.withSchema('kline').createTable('candles', (t) => {
    t.integer('pool_id').notNullable().references('id').inTable('kline.pools').onDelete('CASCADE');
    t.string('interval', 3).notNullable();
    t.bigInteger('open_time').notNullable();
    t.double('open');
    t.double('high');
    t.double('low');
    t.double('close');
    t.double('volume');
    t.bigInteger('open_src').notNullable();
    t.bigInteger('close_src_time').notNullable();
    t.bigInteger('close_src_rank').notNullable();
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['pool_id', 'interval', 'open_time']);
  });
  // Retention of 1s candles deletes by age across pools.
  await knex.raw("create index candles_1s_age_idx on kline.candles (open_time) where interval = '1s'");
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop schema if exists kline cascade');
}
