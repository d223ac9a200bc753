import type { Knex } from 'knex';

/**
 * Gas for token deposit addresses: the gas station (the platform's EVM key of index 2^31 − 1,
 * docs/decisions.md "gas for token deposit addresses") tops up a deposit address before a token
 * forward, refund or sweep, each top-up an outgoing transfer of kind `gas_topup_<purpose>` (one
 * per order and purpose, as every kind: the forward's and a later sweep's top-up of one order
 * are two). The kind column grows to hold them. The order sequence stops one short of 2^31 − 1,
 * so no order's deposit index is ever the station's.
 */
export async function up(knex: Knex): Promise<void> {
  const { rows } = await knex.raw<{ rows: unknown[] }>('select 1 from agg.orders where deposit_index = 2147483647');
  if (rows.length > 0) throw new Error('an order holds deposit index 2147483647, the gas station key: move it before this migration');
  await knex.raw('alter sequence agg.order_deposit_index_seq maxvalue 2147483646');
  await knex.raw('alter table agg.orders add constraint orders_deposit_index_not_station check (deposit_index < 2147483647)');
  await knex.raw('alter table agg.outgoing_transfers alter column kind type varchar(32)');
  await knex.raw('alter table agg.outgoing_transfers drop constraint outgoing_transfers_kind');
  await knex.raw(
    "alter table agg.outgoing_transfers add constraint outgoing_transfers_kind check (kind in ('forward', 'approve', 'refund', 'sweep', 'gas_topup_forward', 'gas_topup_refund', 'gas_topup_sweep'))",
  );
  // the station's next nonce: the highest of its transfers not yet mined
  await knex.raw("create index outgoing_transfers_open_sender on agg.outgoing_transfers (chain_type, from_address, nonce) where status in ('signed', 'broadcast')");
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists agg.outgoing_transfers_open_sender');
  await knex.raw("delete from agg.outgoing_transfers where kind like 'gas_topup_%'");
  await knex.raw('alter table agg.outgoing_transfers drop constraint outgoing_transfers_kind');
  await knex.raw("alter table agg.outgoing_transfers add constraint outgoing_transfers_kind check (kind in ('forward', 'approve', 'refund', 'sweep'))");
  await knex.raw('alter table agg.outgoing_transfers alter column kind type varchar(16)');
  await knex.raw('alter table agg.orders drop constraint orders_deposit_index_not_station');
  await knex.raw('alter sequence agg.order_deposit_index_seq maxvalue 2147483647');
}
