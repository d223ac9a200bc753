import type { Knex } from 'knex';

/**
 * Integrator API (schema `agg`): integrators and their keys (secrets stored as sha256 only),
 * deposit-address orders with their fee, rate and price snapshots, the audit of every state
 * change, and the integrator commission ledger. Amounts are integers of the smallest unit
 * (numeric(78,0) holds any uint256).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('create schema if not exists agg');

  await knex.schema.withSchema('agg').createTable('integrators', (t) => {
    t.bigIncrements('id').primary();
    t.string('name', 200).notNullable();
    t.boolean('is_active').notNullable().defaultTo(true);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    // deleted integrators keep their row: their orders and ledger lines still name them
    t.timestamp('deleted_at', { useTz: true });
  });

  await knex.schema.withSchema('agg').createTable('integrator_keys', (t) => {
    t.string('key_id', 32).primary();
    t.bigInteger('integrator_id').notNullable().references('id').inTable('agg.integrators');
    t.string('secret_hash', 64).notNullable();
    t.string('label', 200);
    t.integer('fee_rate_bp').notNullable();
    t.boolean('is_enabled').notNullable().defaultTo(true);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('deleted_at', { useTz: true });
    t.index(['integrator_id']);
  });
  // 0.01 %–10.00 %
  await knex.raw('alter table agg.integrator_keys add constraint integrator_keys_fee_rate_range check (fee_rate_bp between 1 and 1000)');

  await knex.schema.withSchema('agg').createTable('orders', (t) => {
    t.bigIncrements('id').primary();
    t.string('order_no', 40).notNullable().unique();
    t.bigInteger('integrator_id').references('id').inTable('agg.integrators');
    t.string('key_id', 32);
    t.string('client_order_id', 128);
    /** sha256 of the creation payload that matters: a repeat of the client_order_id must match it. */
    t.string('request_hash', 64).notNullable();
    t.integer('src_token_id').notNullable();
    t.integer('dst_token_id').notNullable();
    t.specificType('amount_in', 'numeric(78,0)').notNullable();
    t.string('dst_address', 128).notNullable();
    t.string('refund_address', 128);
    t.timestamp('refund_requested_at', { useTz: true });
    t.integer('channel_id').notNullable();
    t.string('channel_kind', 40).notNullable();
    t.string('provider_order_id', 200).notNullable();
    t.string('deposit_address', 128).notNullable();
    t.string('deposit_memo', 500);
    t.string('deposit_chain_type', 20).notNullable();
    t.string('slippage', 40).notNullable();
    t.specificType('estimated_out', 'numeric(78,0)').notNullable();
    t.specificType('min_acceptable_out', 'numeric(78,0)').notNullable();
    t.specificType('fee_platform', 'numeric(78,0)').notNullable();
    t.specificType('fee_partner', 'numeric(78,0)').notNullable();
    t.specificType('fee_integrator', 'numeric(78,0)').notNullable();
    t.specificType('fee_platform_original', 'numeric(78,0)').notNullable();
    t.string('platform_fee_rate', 20).notNullable();
    t.string('partner_fee_rate', 20).notNullable();
    t.string('integrator_fee_rate', 20).notNullable();
    /** USD price of one whole source token at creation, and when the price service had it. */
    t.specificType('src_price_usd', 'numeric').notNullable();
    t.timestamp('src_price_as_of', { useTz: true });
    t.string('state', 32).notNullable();
    t.integer('version').notNullable().defaultTo(0);
    t.timestamp('expire_at', { useTz: true }).notNullable();
    t.timestamp('auto_cancel_at', { useTz: true }).notNullable();
    t.string('deposit_tx_hash', 200);
    t.specificType('deposit_amount', 'numeric(78,0)');
    t.timestamp('deposited_at', { useTz: true });
    t.string('payout_tx_hash', 200);
    /** The channel's execution details once it reported an outcome (status answer). */
    t.jsonb('execution');
    t.jsonb('extra').notNullable().defaultTo('{}');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('settled_at', { useTz: true });
    t.index(['integrator_id', 'created_at']);
  });
  // one order per client_order_id and integrator; orders without an integrator share one space
  await knex.raw('create unique index orders_client_order_id on agg.orders ((coalesce(integrator_id, 0)), client_order_id) where client_order_id is not null');
  // the tracker's work lists: open orders by state
  await knex.raw("create index orders_open_state on agg.orders (state, expire_at) where state not in ('Settled', 'Refunded', 'FailedNoRefund')");
  await knex.raw('create index orders_deposit_address on agg.orders (deposit_chain_type, deposit_address)');

  await knex.schema.withSchema('agg').createTable('order_audit', (t) => {
    t.bigIncrements('id').primary();
    t.bigInteger('order_id').notNullable().references('id').inTable('agg.orders');
    t.string('from_state', 32);
    t.string('to_state', 32).notNullable();
    t.string('event', 40).notNullable();
    t.jsonb('detail').notNullable().defaultTo('{}');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['order_id', 'id']);
  });

  await knex.schema.withSchema('agg').createTable('integrator_commission_ledger', (t) => {
    t.bigIncrements('id').primary();
    // one line per order: settlement replays write nothing twice
    t.bigInteger('order_id').notNullable().unique().references('id').inTable('agg.orders');
    t.bigInteger('integrator_id').notNullable().references('id').inTable('agg.integrators');
    t.integer('token_id').notNullable();
    t.specificType('amount', 'numeric(78,0)').notNullable();
    t.specificType('price_usd', 'numeric').notNullable();
    t.specificType('amount_usd', 'numeric').notNullable();
    t.string('state', 20).notNullable().defaultTo('Available');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['integrator_id', 'state']);
  });
  await knex.raw(
    "alter table agg.integrator_commission_ledger add constraint commission_ledger_state check (state in ('Available', 'WithdrawRequested', 'Withdrawn'))",
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop table if exists agg.integrator_commission_ledger, agg.order_audit, agg.orders, agg.integrator_keys, agg.integrators cascade');
}
