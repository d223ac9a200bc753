import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { createDb, type Knex } from '@chainpipe/db';
import { IntegratorRepository, OrderRepository } from '@chainpipe/order-store';
import { testEnv } from '@chainpipe/testing';
import { orderFixture } from './order-fixtures';

describe('order store (real Postgres)', () => {
  let db: Knex;
  let orders: OrderRepository;
  let integratorId: string;

  before(async () => {
    db = createDb({ url: testEnv().databaseUrl, poolMax: 8 });
    orders = new OrderRepository(db);
    integratorId = await new IntegratorRepository(db).createIntegrator('Store test');
  });
  after(() => db.destroy());

  it('a state change is a compare-and-set on the version: of two racing writers exactly one wins', async () => {
    const row = await orders.insert(orderFixture());
    expect(row).to.include({ state: 'Depositing', version: 0 });
    const results = await Promise.all([
      orders.transition(row, 'ManualReview', { refund_address: 'A' }, { event: 'refund_request' }),
      orders.transition(row, 'CancelledNoDeposit', {}, { event: 'expire' }),
    ]);
    expect(results.filter((r) => r !== undefined)).to.have.length(1);
    const stored = (await orders.findById(row.id))!;
    expect(stored.version).to.equal(1);
    const audit = await orders.audit(row.id);
    expect(audit.map((a) => [a.from_state, a.to_state, a.event])).to.deep.equal([
      [null, 'Depositing', 'created'],
      ['Depositing', stored.state, stored.state === 'ManualReview' ? 'refund_request' : 'expire'],
    ]);
  });

  it('writes one ledger line per order, valued at the price snapshot, however often settlement runs', async () => {
    const row = await orders.insert(orderFixture({ integrator_id: integratorId, state: 'Completed', fee_integrator: '2500000000000000', src_price_usd: '3000.5' }));
    const line = { integratorId, tokenId: 101, tokenDecimals: 18, amount: 2_500_000_000_000_000n, priceUsd: row.src_price_usd };
    const settled = (await orders.transition(row, 'Settled', { settled_at: new Date() }, { event: 'settle' }, line))!;
    expect(settled.state).to.equal('Settled');
    // a replay holding the old version changes nothing
    expect(await orders.transition(row, 'Settled', {}, { event: 'settle' }, line)).to.equal(undefined);
    // even a second settlement at the new version cannot write a second line
    await orders.transition(settled, 'Settled', {}, { event: 'settle' }, line);
    const [{ n }] = await db('agg.integrator_commission_ledger').where({ order_id: row.id }).count<{ n: string }[]>({ n: '*' });
    expect(Number(n)).to.equal(1);
    const ledger = (await orders.ledgerOf(row.id))!;
    // 0.0025 ETH at 3000.5 USD = 7.50125 USD
    expect(ledger).to.include({ integrator_id: integratorId, token_id: 101, amount: '2500000000000000', state: 'Available' });
    expect(Number(ledger.amount_usd)).to.equal(7.50125);
  });

  it('concurrent creations of one client_order_id run one after the other and see the first order', async () => {
    const clientId = `c-${randomBytes(4).toString('hex')}`;
    let created = 0;
    const rows = await Promise.all(
      Array.from({ length: 6 }, () =>
        orders.withClientOrderLock(integratorId, clientId, async (existing, trx) => {
          if (existing) return existing;
          created++;
          await new Promise((r) => setTimeout(r, 30)); // the channel call happens here
          return orders.insert(orderFixture({ integrator_id: integratorId, client_order_id: clientId }), trx);
        }),
      ),
    );
    expect(created).to.equal(1);
    expect(new Set(rows.map((r) => r.id)).size).to.equal(1);
    // the same id under another integrator (or none) is another order
    const other = await orders.withClientOrderLock(null, clientId, async (existing, trx) => existing ?? orders.insert(orderFixture({ client_order_id: clientId }), trx));
    expect(other.id).to.not.equal(rows[0].id);
  });
  it("no order takes the gas station's deposit index 2^31 − 1: the sequence stops one short and the table refuses it", async () => {
    const { rows } = await db.raw<{ rows: { max_value: string }[] }>("select max_value from pg_sequences where schemaname = 'agg' and sequencename = 'order_deposit_index_seq'");
    expect(rows[0].max_value).to.equal('2147483646');
    let refused: Error | undefined;
    await orders.insert(orderFixture({ deposit_index: 2 ** 31 - 1 })).catch((err: Error) => (refused = err));
    expect(refused?.message).to.match(/orders_deposit_index_not_station/);
  });

  it('a movement of funds that changes no state is noted once per transaction hash, in the order\'s state, however many writers race', async () => {
    const row = await orders.insert(orderFixture({ state: 'Exchanging' }));
    const topUp = { order_id: row.id, tx_hash: '0x' + randomBytes(32).toString('hex'), amount: '6640000000000000', from_address: '0x' + 'a'.repeat(40), to_address: row.deposit_address, chain_type: 'ethereum', detail: { purpose: 'forward' } };
    const written = await Promise.all([1, 2, 3, 4].map(() => orders.recordGasTopUp(topUp)));
    expect(written.filter(Boolean), 'one writer records it').to.have.length(1);
    const audit = (await orders.audit(row.id)).filter((a) => a.event === 'gas_topup');
    expect(audit.map((a) => [a.from_state, a.to_state, a.detail])).to.deep.equal([
      ['Exchanging', 'Exchanging', { tx_hash: topUp.tx_hash, purpose: 'forward', amount: '6640000000000000', from: topUp.from_address, to: row.deposit_address, chain_type: 'ethereum' }],
    ]);
    expect((await orders.findById(row.id))!.version, 'the order itself is not changed').to.equal(row.version);
  });
});
