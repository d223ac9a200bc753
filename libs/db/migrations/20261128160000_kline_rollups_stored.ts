import type { Knex } from 'knex';

/**
 * Weeks, months and years (`1w`, `1M`, `1Y`) become stored candles, fed by the base candles'
 * contributions as the other longer intervals are, instead of being aggregated from the stored
 * days on every change of a day and on every read (a year's candle read up to 366 days a pool
 * and aggregator call). This backfills them from the days stored so far, by the same rules: the
 * open of the first day with an open, the close of the last day with a close, the extremes, the
 * volumes summed; `open_src` the earliest of the days', the close's source the latest.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    insert into kline.candles (pool_id, interval, open_time, open, high, low, close, volume, open_src, close_src_time, close_src_rank)
    select d.pool_id, p.interval, p.open_time,
           (array_agg(d.open order by d.open_time) filter (where d.open is not null))[1],
           max(d.high), min(d.low),
           (array_agg(d.close order by d.open_time desc) filter (where d.close is not null))[1],
           sum(d.volume),
           min(d.open_src),
           (array_agg(d.close_src_time order by d.close_src_time desc, d.close_src_rank desc))[1],
           (array_agg(d.close_src_rank order by d.close_src_time desc, d.close_src_rank desc))[1]
    from kline.candles d
    cross join lateral (values
      ('1w', extract(epoch from date_trunc('week', to_timestamp(d.open_time) at time zone 'UTC'))::bigint),
      ('1M', extract(epoch from date_trunc('month', to_timestamp(d.open_time) at time zone 'UTC'))::bigint),
      ('1Y', extract(epoch from date_trunc('year', to_timestamp(d.open_time) at time zone 'UTC'))::bigint)
    ) as p(interval, open_time)
    where d.interval = '1d'
    group by d.pool_id, p.interval, p.open_time
    on conflict (pool_id, interval, open_time) do nothing`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw("delete from kline.candles where interval in ('1w', '1M', '1Y')");
}
