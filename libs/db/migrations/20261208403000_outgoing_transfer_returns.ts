import type { Knex } from 'knex';

/**
 * The `return` transfer of an order (docs/decisions.md#d166): the deposits the order could not take
 * (extra deposits of its source token) sent back to its refund address once the order's own
 * money is settled, one per order like every kind.
 */
const WITH_RETURN = "('forward', 'approve', 'refund', 'sweep', 'gas_topup_forward', 'gas_topup_refund', 'gas_topup_sweep', 'return')";
const WITHOUT_RETURN = "('forward', 'approve', 'refund', 'sweep', 'gas_topup_forward', 'gas_topup_refund', 'gas_topup_sweep')";

export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table agg.outgoing_transfers drop constraint outgoing_transfers_kind');
  await knex.raw(`alter table agg.outgoing_transfers add constraint outgoing_transfers_kind check (kind in ${WITH_RETURN})`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw("delete from agg.outgoing_transfers where kind = 'return'");
  await knex.raw('alter table agg.outgoing_transfers drop constraint outgoing_transfers_kind');
  await knex.raw(`alter table agg.outgoing_transfers add constraint outgoing_transfers_kind check (kind in ${WITHOUT_RETURN})`);
}
