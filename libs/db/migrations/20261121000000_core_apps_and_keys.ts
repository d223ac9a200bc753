import type { Knex } from 'knex';

/** Applications (callers identified by API keys) and their keys; secrets are stored hashed. */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('create schema if not exists core');
  await knex.schema.withSchema('core').createTable('apps', (t) => {
    t.string('app_id', 64).primary();
    t.string('name', 200).notNullable();
    t.boolean('is_active').notNullable().defaultTo(true);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.schema.withSchema('core').createTable('api_keys', (t) => {
    t.string('key_id', 32).primary();
    t.string('app_id', 64).notNullable().references('app_id').inTable('core.apps').onDelete('CASCADE');
    t.string('secret_hash', 64).notNullable();
    t.string('label', 200);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('revoked_at', { useTz: true });
    t.index(['app_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop schema if exists core cascade');
}
