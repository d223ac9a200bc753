import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { Registry } from 'prom-client';
import { TOPICS, loadContracts, type NormalizedTx, type OrderEventMessage } from '@chainpipe/contracts';
import { createDb, type Knex } from '@chainpipe/db';
import { TopicProducer, createKafka } from '@chainpipe/kafka';
import { IntegratorRepository, OrderDepositRepository, OrderRepository, type OrderRow } from '@chainpipe/order-store';
import { createLogger } from '@chainpipe/runtime';
import { ManualClock, collectTopic, createRegistryTopics, testEnv, uniquePrefix, waitFor, type TopicCollector } from '@chainpipe/testing';
import { OrderTracker } from '../../apps/order-tracker/src/tracker';
import { nativeDepositPush, orderFixture } from './order-fixtures';

/**
 * The order tracker's deposit, expiry and settlement paths and its event outbox, in process on the
 * real Postgres and Kafka. The channel status path needs the channel adapters and upstream-sim and
 * is covered end to end; here the status source refuses every call, which the tracker counts as a
 * failed call and retries on its next sweep.
 */
const APP = `deposits-${randomBytes(3).toString('hex')}`;
const ETH_TOKEN = 101; // Ethereum native coin of the price reference seed (18 decimals)

/**
 * The chain node's view of transactions (a stand-in of the node that `fetchFromOrigin` asks): what
 * the test put on the chain. A push of a transaction not here is one the chain never had.
 */
const onChain = new Map<string, NormalizedTx>();
/** A push of a transaction the chain has (`forged`: one it never had). */
const push = (to: string, amountWei: string, over: { hash?: string; status?: 'success' | 'pending'; time?: number; app?: string; forged?: boolean } = {}) => {
  const m = nativeDepositPush(over.app ?? APP, to, amountWei, over);
  if (!over.forged) onChain.set(m.tx.tx_hash, { ...m.tx, height: over.status === 'pending' ? null : m.tx.height });
  return m;
};
/** Long: a sweep of this suite never gives up on another suite's deposit in the shared database. */
const VERIFY_WINDOW_MS = 24 * 3600_000;

describe('order tracker (real Postgres and Kafka, in process)', function () {
  this.timeout(60_000);
  let db: Knex;
  let orders: OrderRepository;
  let producer: TopicProducer;
  let tracker: OrderTracker;
  let events: TopicCollector;
  let prefix: string;
  let statusCalls = 0;
  /** A tracker on the test's tables; on the wall clock unless given another. */
  let newTracker: (clock?: ManualClock) => OrderTracker;

  before(async () => {
    db = createDb({ url: testEnv().databaseUrl, poolMax: 6 });
    orders = new OrderRepository(db);
    prefix = uniquePrefix('ot');
    await createRegistryTopics(prefix, [TOPICS.ordersEvents, TOPICS.addressesChanges]);
    const logger = createLogger({ name: 'order-tracker-test', level: 'error' });
    const registry = new Registry();
    producer = new TopicProducer({ kafka: createKafka({ brokers: testEnv().kafkaBrokers, clientId: 'ot-test', logger }), contracts: loadContracts(), logger, registry, topicPrefix: prefix });
    await producer.connect();
    newTracker = (clock) =>
      new OrderTracker({
        db,
        producer,
        channels: {
          status: async () => {
            statusCalls++;
            throw new Error('channel status is not part of this test');
          },
        },
        logger,
        registry: new Registry(),
        clock,
        depositAppId: APP,
        chainTx: async (_network, hash) => {
          const tx = onChain.get(hash);
          return tx ? { found: true, tx } : { found: false };
        },
        depositVerifyWindowMs: VERIFY_WINDOW_MS,
        batchSize: 500,
        statusTimeoutMs: 1000,
      });
    tracker = newTracker();
    events = await collectTopic(`${prefix}${TOPICS.ordersEvents.name}`);
  });
  after(async () => {
    await events?.stop();
    await producer?.disconnect();
    await db?.destroy();
  });

  const eventsOf = (o: OrderRow): OrderEventMessage[] =>
    events.messages.map((m) => JSON.parse(m.value!.toString()) as OrderEventMessage).filter((e) => e.order_no === o.order_no);
  const reload = async (o: OrderRow) => (await orders.findById(o.id))!;

  it('a deposit of the ordered amount before expiry starts the exchange, once, with an event and an audit row', async () => {
    const o = await orders.insert(orderFixture({}));
    const pending = push(o.deposit_address, o.amount_in, { status: 'pending' });
    await tracker.handlePushes([pending]);
    expect((await reload(o)).state, 'a pending transaction pays nothing yet').to.equal('Depositing');
    const p = push(o.deposit_address, o.amount_in, { hash: pending.tx.tx_hash }); // mined
    await tracker.handlePushes([p]);
    const after = await reload(o);
    expect(after).to.include({ state: 'Exchanging', deposit_tx_hash: p.tx.tx_hash, deposit_amount: o.amount_in });
    await tracker.handlePushes([p, p]); // replays
    expect((await reload(o)).version).to.equal(after.version);
    await waitFor(() => eventsOf(o).length === 2, { what: 'created and deposit events' });
    const [created, deposit] = eventsOf(o);
    expect(created).to.include({ event: 'created', from_state: null, to_state: 'Depositing' });
    expect(deposit).to.include({ event: 'deposit', from_state: 'Depositing', to_state: 'Exchanging' });
    expect(deposit.detail).to.include({ tx_hash: p.tx.tx_hash, amount: o.amount_in });
    expect((await orders.audit(o.id)).map((a) => a.to_state)).to.deep.equal(['Depositing', 'Exchanging']);
  });

  it('a short, an over or a late deposit goes to manual review with the received amount recorded; other applications are ignored', async () => {
    const short = await orders.insert(orderFixture({}));
    const over = await orders.insert(orderFixture({}));
    const late = await orders.insert(orderFixture({ expire_at: new Date(Date.now() - 60_000) }));
    const cancelled = await orders.insert(orderFixture({ state: 'CancelledNoDeposit', expire_at: new Date(Date.now() - 60_000) }));
    const foreign = await orders.insert(orderFixture({}));
    await tracker.handlePushes([
      push(short.deposit_address, '99999999999999999'),
      push(over.deposit_address, '100000000000000001'),
      push(late.deposit_address, late.amount_in),
      push(cancelled.deposit_address, '50000000000000000'),
      push(foreign.deposit_address, foreign.amount_in, { app: 'someone-else' }),
    ]);
    expect(await reload(short)).to.include({ state: 'ManualReview', deposit_amount: '99999999999999999' });
    expect(await reload(over)).to.include({ state: 'ManualReview', deposit_amount: '100000000000000001' });
    expect(await reload(late)).to.include({ state: 'ManualReview', deposit_amount: late.amount_in });
    expect(await reload(cancelled)).to.include({ state: 'ManualReview', deposit_amount: '50000000000000000' });
    expect((await reload(foreign)).state).to.equal('Depositing');
  });

  it('a deposit moves the order of its address only: an older unpaid order of the same amount stays unpaid', async () => {
    const older = await orders.insert(orderFixture({}));
    const newer = await orders.insert(orderFixture({}));
    await tracker.handlePushes([push(newer.deposit_address, newer.amount_in)]);
    expect((await reload(older)).state).to.equal('Depositing');
    expect(await reload(newer)).to.include({ state: 'Exchanging', deposit_amount: newer.amount_in });
    // a short deposit to the older one is its own, not a guess at another order of that amount
    await tracker.handlePushes([push(older.deposit_address, '1')]);
    expect(await reload(older)).to.include({ state: 'ManualReview', deposit_amount: '1' });
  });

  it('an address several orders share (orders from before deposit indexes) is not guessed at: no order moves', async () => {
    const shared = '0x' + randomBytes(20).toString('hex');
    const a = await orders.insert(orderFixture({ deposit_address: shared, amount_in: '200000000000000000' }));
    const b = await orders.insert(orderFixture({ deposit_address: shared, amount_in: '300000000000000000' }));
    await tracker.handlePushes([push(shared, '300000000000000000')]);
    expect((await reload(a)).state).to.equal('Depositing');
    expect((await reload(b)).state).to.equal('Depositing');
  });

  it('expiry cancels an unpaid order at its expire_at instant; settlement closes it at auto_cancel_at, without commission', async () => {
    const clock = new ManualClock(Date.now());
    const timed = newTracker(clock);
    const o = await orders.insert(orderFixture({ expire_at: new Date(clock.now() + 1000), auto_cancel_at: new Date(clock.now() + 5000) }));
    await clock.advance(999);
    await timed.sweep();
    expect((await reload(o)).state, 'a millisecond before expire_at').to.equal('Depositing');
    await clock.advance(1);
    await timed.sweep();
    expect((await reload(o)).state).to.equal('CancelledNoDeposit');
    await clock.advance(3_999);
    await timed.sweep();
    expect((await reload(o)).state, 'a millisecond before auto_cancel_at').to.equal('CancelledNoDeposit');
    await clock.advance(1);
    await timed.sweep();
    const settled = await reload(o);
    expect(settled.state).to.equal('Settled');
    expect(new Date(settled.settled_at!).getTime()).to.equal(clock.now());
    expect(await orders.ledgerOf(o.id)).to.equal(undefined);
  });

  it('a completed order of an integrator settles into one Available ledger line at the creation-time price', async () => {
    const integratorId = await new IntegratorRepository(db).createIntegrator('Tracker test');
    // created at 2000 USD/ETH; 0.25 % of 0.1 ETH = 0.00025 ETH = 0.5 USD
    const o = await orders.insert(orderFixture({ integrator_id: integratorId, state: 'Completed', fee_integrator: '250000000000000', integrator_fee_rate: '0.0025', src_price_usd: '2000' }));
    const without = await orders.insert(orderFixture({ state: 'Completed' }));
    await tracker.sweep();
    await tracker.sweep();
    expect((await reload(o)).state).to.equal('Settled');
    expect((await reload(without)).state).to.equal('Settled');
    const line = (await orders.ledgerOf(o.id))!;
    expect(line).to.include({ integrator_id: integratorId, token_id: ETH_TOKEN, amount: '250000000000000', state: 'Available' });
    expect(Number(line.amount_usd)).to.equal(0.5);
    expect(await orders.ledgerOf(without.id)).to.equal(undefined);
    await waitFor(() => eventsOf(o).some((e) => e.event === 'settle'), { what: 'settle event' });
    expect(eventsOf(o).find((e) => e.event === 'settle')).to.include({ from_state: 'Completed', to_state: 'Settled' });
  });

  it('registers the deposit address of an unpaid order that is not monitored yet, and publishes the change', async () => {
    const o = await orders.insert(orderFixture({}));
    const changes = await collectTopic(`${prefix}${TOPICS.addressesChanges.name}`);
    try {
      await tracker.sweep();
      const row = await db('tx.monitored_addresses').where({ app_id: APP, chain_type: 'ethereum', address: o.deposit_address }).first();
      expect(row, 'monitored address row').to.not.equal(undefined);
      await waitFor(
        () => changes.messages.some((m) => {
          const v = JSON.parse(m.value!.toString()) as { app_id: string; adds: string[] };
          return v.app_id === APP && v.adds.includes(o.deposit_address);
        }),
        { what: 'addresses.changes.v1 message' },
      );
    } finally {
      await changes.stop();
    }
  });

  it('an unreachable channel leaves exchanging orders as they are for the next sweep', async () => {
    const o = await orders.insert(orderFixture({ state: 'Exchanging' }));
    const before = statusCalls;
    await tracker.sweep();
    expect(statusCalls).to.be.greaterThan(before);
    expect((await reload(o)).state).to.equal('Exchanging');
  });
  it('an expired order whose refund request came before its deposit records the deposit in ManualReview, once, for an operator', async () => {
    const o = await orders.insert(orderFixture({ expire_at: new Date(Date.now() - 60_000) }));
    const waiting = (await orders.transition(o, 'ManualReview', { refund_address: '0x' + '3'.repeat(40), refund_requested_at: new Date() }, { event: 'refund_request' }))!;
    const p = push(o.deposit_address, o.amount_in);
    await tracker.handlePushes([p]);
    const recorded = await reload(o);
    expect(recorded).to.include({ state: 'ManualReview', deposit_amount: o.amount_in, deposit_tx_hash: p.tx.tx_hash, version: waiting.version + 1 });
    const second = push(o.deposit_address, '5');
    await tracker.handlePushes([p, second]);
    expect(await reload(o), 'a replay or a second deposit changes nothing').to.include({ version: recorded.version, deposit_amount: o.amount_in });
    // the second deposit is on the record, not taken
    expect((await orders.audit(o.id)).map((a) => [a.event, a.to_state])).to.deep.equal([['created', 'Depositing'], ['refund_request', 'ManualReview'], ['deposit', 'ManualReview'], ['extra_deposit', 'ManualReview']]);
    expect((await orders.audit(o.id)).at(-1)!.detail).to.include({ tx_hash: second.tx.tx_hash, amount: '5' });
  });

  it('a forged deposit (a transaction the chain node never had) moves nothing: recorded unverified, asked again, not_on_chain after the window', async () => {
    const clock = new ManualClock(Date.now());
    const timed = newTracker(clock);
    const o = await orders.insert(orderFixture({}));
    const forged = push(o.deposit_address, o.amount_in, { forged: true });
    await timed.handlePushes([forged]);
    expect(await reload(o)).to.include({ state: 'Depositing', deposit_tx_hash: null, version: o.version });
    const deposits = new OrderDepositRepository(db);
    expect((await deposits.ofOrder(o.id)).map((d) => [d.tx_hash, d.status])).to.deep.equal([[forged.tx.tx_hash, 'unverified']]);
    await timed.handlePushes([forged]); // asked again (a replay; the sweep asks the same way)
    expect((await reload(o)).state, 'still unknown to the node within the window').to.equal('Depositing');
    expect((await deposits.ofOrder(o.id))[0]).to.include({ status: 'unverified', checks: 2, detail: 'unknown_to_node' });
    await clock.advance(VERIFY_WINDOW_MS);
    await timed.handlePushes([forged]);
    expect((await deposits.ofOrder(o.id)).map((d) => [d.status, d.amount])).to.deep.equal([['not_on_chain', null]]);
    await timed.handlePushes([forged]); // a verdict is final
    expect(await reload(o)).to.include({ state: 'Depositing', version: o.version });
    expect((await orders.audit(o.id)).map((a) => a.event)).to.deep.equal(['created']);
  });

  it("the node's record decides the amount, not the push's: a push claiming the ordered amount for a smaller payment is ManualReview with what the chain shows", async () => {
    const o = await orders.insert(orderFixture({}));
    const real = push(o.deposit_address, '1000');
    const claimed = { ...real, tx: { ...real.tx, amount: o.amount_in } };
    await tracker.handlePushes([claimed]);
    expect(await reload(o)).to.include({ state: 'ManualReview', deposit_amount: '1000', deposit_tx_hash: real.tx.tx_hash });
  });

  it('a transaction the node learns late: the sweep verifies it and the order is paid then', async () => {
    const o = await orders.insert(orderFixture({}));
    const p = push(o.deposit_address, o.amount_in, { forged: true });
    await tracker.handlePushes([p]);
    expect((await reload(o)).state).to.equal('Depositing');
    onChain.set(p.tx.tx_hash, p.tx); // the node has it now
    await tracker.sweep();
    expect(await reload(o)).to.include({ state: 'Exchanging', deposit_tx_hash: p.tx.tx_hash, deposit_amount: o.amount_in });
  });

  it('every verified deposit the order cannot take is recorded: a second payment and one after a final state, each an extra_deposit event once, in the order\'s extra deposits', async () => {
    const o = await orders.insert(orderFixture({}));
    const first = push(o.deposit_address, o.amount_in);
    await tracker.handlePushes([first]);
    expect((await reload(o)).state).to.equal('Exchanging');
    const again = push(o.deposit_address, '7000');
    await tracker.handlePushes([again, again]);
    await db('agg.orders').where({ id: o.id }).update({ state: 'Refunded' });
    const late = push(o.deposit_address, '9000');
    await tracker.handlePushes([late]);
    const extras = await new OrderDepositRepository(db).extras(await reload(o));
    expect(extras.map((d) => [d.tx_hash, d.amount, d.status])).to.deep.equal([[again.tx.tx_hash, '7000', 'verified'], [late.tx.tx_hash, '9000', 'verified']]);
    expect((await orders.audit(o.id)).filter((a) => a.event === 'extra_deposit').map((a) => [a.detail.tx_hash, a.detail.amount, a.detail.state])).to.deep.equal([
      [again.tx.tx_hash, '7000', 'Exchanging'],
      [late.tx.tx_hash, '9000', 'Refunded'],
    ]);
    await waitFor(() => eventsOf(o).filter((e) => e.event === 'extra_deposit').length === 2, { what: 'the extra_deposit events' });
    expect(await reload(o)).to.include({ deposit_tx_hash: first.tx.tx_hash, deposit_amount: o.amount_in });
  });

  it('a payment of another token to a native order\'s address is recorded with its asset and amount as the node shows it, an extra_deposit event, and moves nothing', async () => {
    const o = await orders.insert(orderFixture({}));
    const usdc = '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48';
    const m = push(o.deposit_address, '0');
    const wrong = { ...m, tx: { ...m.tx, receiver: usdc, transfer_type: 'token', token_transfers: [{ from_address: m.tx.sender, to_address: o.deposit_address, token_contract_address: usdc, symbol: 'USDC', amount: '2500000', token_id: null, from_token_address: null, to_token_address: null }] } } as typeof m;
    onChain.set(wrong.tx.tx_hash, wrong.tx);
    await tracker.handlePushes([wrong, wrong]);
    expect(await reload(o)).to.include({ state: 'Depositing', deposit_tx_hash: null, version: o.version });
    const [row] = await new OrderDepositRepository(db).extras(await reload(o));
    expect(row).to.include({ tx_hash: wrong.tx.tx_hash, status: 'not_paid', other_asset: usdc, other_amount: '2500000', amount: null });
    expect((await orders.audit(o.id)).filter((a) => a.event === 'extra_deposit').map((a) => a.detail)).to.deep.equal([
      { tx_hash: wrong.tx.tx_hash, asset: usdc, amount: '2500000', network: 'ethereum-mainnet', at: new Date(Number(wrong.tx.tx_time) * 1000).toISOString(), state: 'Depositing' },
    ]);
  });
});
