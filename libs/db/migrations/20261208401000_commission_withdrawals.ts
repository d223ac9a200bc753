import type { Knex } from 'knex';

/**
 * The commission ledger's withdrawal flow (docs/decisions.md#d163): an operator's withdrawal takes
 * an integrator's `Available` lines (`WithdrawRequested`, each line naming its withdrawal), and is
 * marked paid with the payout's reference (`Withdrawn`). The withdrawal row is the audit: who
 * requested it and when, who recorded it paid, when, and with what reference.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.withSchema('agg').createTable('commission_withdrawals', (t) => {
    t.bigIncrements('id').primary();
    t.bigInteger('integrator_id').notNullable().references('id').inTable('agg.integrators');
    t.string('state', 20).notNullable().defaultTo('WithdrawRequested');
    t.string('requested_by', 200).notNullable();
    t.timestamp('requested_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.string('paid_by', 200);
    t.timestamp('paid_at', { useTz: true });
    /** The payout's reference: a transaction hash, a bank reference. */
    t.string('reference', 200);
    t.index(['integrator_id', 'id']);
  });
  await knex.raw("alter table agg.commission_withdrawals add constraint commission_withdrawals_state check (state in ('WithdrawRequested', 'Withdrawn'))");
  await knex.schema.withSchema('agg').alterTable('integrator_commission_ledger', (t) => {
    t.bigInteger('withdrawal_id').references('id').inTable('agg.commission_withdrawals');
  });
  await knex.raw("alter table agg.integrator_commission_ledger add constraint commission_ledger_withdrawal check ((state = 'Available') = (withdrawal_id is null))");
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table agg.integrator_commission_ledger drop constraint if exists commission_ledger_withdrawal');
  await knex.schema.withSchema('agg').alterTable('integrator_commission_ledger', (t) => {
    t.dropColumn('withdrawal_id');
  });
  await knex.schema.withSchema('agg').dropTableIfExists('commission_withdrawals');
}
