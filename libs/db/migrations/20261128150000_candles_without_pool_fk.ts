import type { Knex } from 'knex';

/**
 * kline.candles without its foreign key to kline.pools. The key's check ran for every new candle
 * row (a `select … for key share` of the pool per row): at 10,000 pools about 7 µs a row, 40 % of
 * the aggregator's upsert of the longer candles when they are new, and every 1s candle is new.
 * It guarded nothing the writer does not: kline-aggregator dead-letters ticks of unregistered
 * pools before it writes (PoolRepository.existing), and pools are never deleted by the apps.
 * Deleting a pool still deletes its candles, by a trigger instead of the cascade.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table kline.candles drop constraint if exists candles_pool_id_foreign');
  await knex.raw(`
    create function kline.delete_pool_candles() returns trigger language plpgsql as $$
    begin
      delete from kline.candles where pool_id = old.id;
      return old;
    end $$`);
  await knex.raw('create trigger pools_delete_candles after delete on kline.pools for each row execute function kline.delete_pool_candles()');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop trigger if exists pools_delete_candles on kline.pools');
  await knex.raw('drop function if exists kline.delete_pool_candles()');
  await knex.raw('delete from kline.candles c where not exists (select 1 from kline.pools p where p.id = c.pool_id)');
  await knex.raw('alter table kline.candles add constraint candles_pool_id_foreign foreign key (pool_id) references kline.pools (id) on delete cascade');
}
