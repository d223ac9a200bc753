import type { Knex } from 'knex';

/**
 * Every tick rewrites its pool's 1m…1d candles in place. With full pages each rewrite is a new
 * tuple on another page and a new pkey entry (under a 10,000-pool feed, about 3% of updates were
 * HOT); free room on each page keeps them heap-only (about 90%) and the pkey from bloating.
 * Pages written from now on get the room; existing ones on their next rewrite (VACUUM FULL/CLUSTER).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table kline.candles set (fillfactor = 70)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table kline.candles reset (fillfactor)');
}
