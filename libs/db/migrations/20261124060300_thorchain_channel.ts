import type { Knex } from 'knex';

/** The THORChain channel (adapter `thorchain`), next to ChangeNOW. */
export async function up(knex: Knex): Promise<void> {
  await knex('agg.channels')
    .insert({ id: 2, name: 'THORChain', icon_url: 'https://thorchain.org/favicon.ico', adapter_kind: 'thorchain', base_fee_pct: '0.2', enabled: true })
    .onConflict('id')
    .ignore();
}

export async function down(knex: Knex): Promise<void> {
  await knex('agg.channels').where({ id: 2 }).del();
}
