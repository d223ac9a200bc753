import type { Knex } from 'knex';

/**
 * A key's role: `customer` (every key so far) reads and changes its own application's data;
 * `operator` also manages what every application shares (the candlestick pools, the DEX pools of
 * the trades queues). Issued by `npm run admin -- key:create --role operator` (D171).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    alter table core.api_keys
      add column role text not null default 'customer',
      add constraint api_keys_role_check check (role in ('customer', 'operator'))
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table core.api_keys drop constraint if exists api_keys_role_check, drop column if exists role');
}
