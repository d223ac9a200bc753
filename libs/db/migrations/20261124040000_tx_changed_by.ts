import type { Knex } from 'knex';

/**
 * `tx.transactions.changed_by`: the delivery that last changed the row (chain-parser: the raw
 * record's topic, partition and offset). Deliveries of one block by different datasets merge into
 * one record, and only a delivery that changes a record publishes it again; when a delivery is
 * stored a second time (a replay after a crash between the commit and the publish) it changes
 * nothing, and this column says it is the one whose publish may have been lost. Null for rows
 * written before, or by writers that name no delivery.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table tx.transactions add column changed_by text');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table tx.transactions drop column if exists changed_by');
}
