import type { Knex } from 'knex';

/**
 * Schema `tx`: the address monitoring service.
 *
 * - `blocks`: every block seen per network, the canonical one per height and orphaned ones.
 * - `transactions`: one row per (chain_type, chain_id, tx_hash); `id` is the increasing cursor
 *   of every history query; `record` holds the whole normalized record. A reorg moves a row to
 *   its new block (or marks it orphaned) instead of adding a second row, so queries never show a
 *   transaction twice.
 * - `address_index`: one row per (address, transaction) for keyset search by address, newest
 *   first, across chains or within one; `tokens` lists the token contracts the address moved in
 *   that transaction (the `token` filter).
 * - `monitored_addresses`, `app_configs`, `webhook_queue`: what applications watch and how they
 *   want to be told.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('create schema if not exists tx');

  await knex.schema.withSchema('tx').createTable('blocks', (t) => {
    t.string('network', 64).notNullable();
    t.bigInteger('height').notNullable();
    t.string('hash', 130).notNullable();
    t.string('parent_hash', 130);
    t.bigInteger('block_time');
    t.integer('tx_count').notNullable().defaultTo(0);
    t.boolean('orphaned').notNullable().defaultTo(false);
    t.timestamp('first_seen_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['network', 'height', 'hash']);
  });

  await knex.schema.withSchema('tx').createTable('transactions', (t) => {
    t.bigIncrements('id').primary();
    t.string('chain_type', 32).notNullable();
    t.integer('chain_id').notNullable();
    t.string('network', 64).notNullable();
    t.string('tx_hash', 200).notNullable();
    t.string('block_hash', 130);
    t.bigInteger('height');
    t.integer('tx_index');
    t.bigInteger('tx_time');
    t.string('tx_status', 16);
    t.boolean('orphaned').notNullable().defaultTo(false);
    t.boolean('is_reorg_resend').notNullable().defaultTo(false);
    t.jsonb('record').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['chain_type', 'chain_id', 'tx_hash'], { indexName: 'transactions_chain_hash_uq' });
    t.index(['network', 'block_hash'], 'transactions_block_idx');
  });

  await knex.schema.withSchema('tx').createTable('address_index', (t) => {
    t.string('address', 130).notNullable();
    t.string('chain_type', 32).notNullable();
    t.integer('chain_id').notNullable();
    t.bigInteger('tx_id').notNullable().references('id').inTable('tx.transactions').onDelete('CASCADE');
    t.specificType('tokens', 'text[]').notNullable().defaultTo('{}');
    t.primary(['address', 'chain_type', 'chain_id', 'tx_id']);
  });
  // Cross-chain search by address, newest first (the primary key serves the per-chain one).
  await knex.raw('create index address_index_addr_tx_idx on tx.address_index (address, tx_id desc)');
  await knex.raw('create index address_index_tx_idx on tx.address_index (tx_id)');

  await knex.schema.withSchema('tx').createTable('monitored_addresses', (t) => {
    t.string('app_id', 64).notNullable().references('app_id').inTable('core.apps').onDelete('CASCADE');
    t.string('chain_type', 32).notNullable();
    t.string('address', 130).notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['app_id', 'chain_type', 'address']);
    t.index(['chain_type', 'address'], 'monitored_addresses_lookup_idx');
  });

  await knex.schema.withSchema('tx').createTable('app_configs', (t) => {
    t.string('app_id', 64).primary().references('app_id').inTable('core.apps').onDelete('CASCADE');
    t.boolean('enable_ws').notNullable().defaultTo(true);
    t.boolean('enable_webhook').notNullable().defaultTo(false);
    t.string('webhook_url', 2048);
    /** Encrypted at rest (AES-256-GCM); sent as-is in the Sign header, never returned by reads. */
    t.text('webhook_secret_enc');
    t.integer('ws_ack_resend_interval_seconds').notNullable().defaultTo(30);
    t.string('webhook_delivery_status', 16).notNullable().defaultTo('active');
    t.bigInteger('webhook_retrying_since');
    t.bigInteger('webhook_last_failed_transaction_id');
    t.text('webhook_last_failure_reason');
    t.boolean('is_active').notNullable().defaultTo(true);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });

  await knex.schema.withSchema('tx').createTable('webhook_queue', (t) => {
    t.bigIncrements('id').primary();
    t.string('app_id', 64).notNullable().references('app_id').inTable('core.apps').onDelete('CASCADE');
    t.bigInteger('tx_id').notNullable();
    t.string('tx_status', 16);
    t.jsonb('payload').notNullable();
    t.integer('attempts').notNullable().defaultTo(0);
    t.bigInteger('first_failed_at').notNullable();
    t.bigInteger('next_attempt_at').notNullable();
    t.text('last_error');
    t.unique(['app_id', 'tx_id', 'tx_status'], { indexName: 'webhook_queue_item_uq' });
    t.index(['app_id', 'next_attempt_at'], 'webhook_queue_due_idx');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop schema if exists tx cascade');
}
