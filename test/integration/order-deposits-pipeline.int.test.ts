import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { Registry } from 'prom-client';
import { TOPICS, loadContracts, type OrderEventMessage } from '@chainpipe/contracts';
import { ApiKeyRepository, createDb, type Knex } from '@chainpipe/db';
import { TopicProducer, createKafka } from '@chainpipe/kafka';
import { OrderRepository } from '@chainpipe/order-store';
import { createLogger } from '@chainpipe/runtime';
import { MonitoredAddressRepository, changeMessages } from '@chainpipe/tx-store';
import { mnemonicToAccount } from 'viem/accounts';
import {
  TEST_KEY_MNEMONIC, collectTopic, createRegistryTopics, freePort, parsePrometheusText, simChain, spawnTs, stopProcess, testEnv, uniquePrefix, waitFor, waitReady,
  type RunningProcess, type TopicCollector,
} from '@chainpipe/testing';
import { orderFixture } from './order-fixtures';

/**
 * A deposit through the real address monitoring pipeline to the order tracker, every part a
 * process: the deposit address registered as a monitored address of the internal application
 * (the gateway's way: table + addresses.changes.v1), payments on the simulated chain, whose
 * blocks upstream-sim posts to chain-ingest's /stream, chain-parser, tx-matcher and
 * order-tracker (which reads each deposit from the simulated chain's node before it moves the
 * order), and the tracker's orders.events.v1 read back.
 */
describe('order deposits through /stream → chain-parser → tx-matcher → tx.push.v1 → order-tracker', function () {
  this.timeout(180_000);
  const env = testEnv();
  const secret = randomBytes(12).toString('hex');
  const appId = `deposits-${randomBytes(3).toString('hex')}`;
  const procs: RunningProcess[] = [];
  const logger = createLogger({ name: 'deposits-test', level: 'error' });
  let db: Knex;
  let prefix: string;
  let producer: TopicProducer;
  let events: TopicCollector;
  let ingestPort = 0;
  let trackerOps = 0;
  let trackerEnv: Record<string, string> = {};
  const trackerIndex = 3;
  let simUrl = '';
  const chain = simChain(() => simUrl);
  const payer = mnemonicToAccount(TEST_KEY_MNEMONIC, { addressIndex: 12 });

  before(async () => {
    db = createDb({ url: env.databaseUrl, poolMax: 4 });
    prefix = uniquePrefix('deposits');
    await createRegistryTopics(prefix);
    const common = { KAFKA_BROKERS: env.kafkaBrokers.join(','), KAFKA_TOPIC_PREFIX: prefix, DATABASE_URL: env.databaseUrl, REDIS_URL: env.redisUrl, REDIS_KEY_PREFIX: prefix, LOG_LEVEL: 'warn' };
    const [ingestOps, parserOps, matcherOps, simPort, simOps] = await Promise.all([freePort(), freePort(), freePort(), freePort(), freePort()]);
    [ingestPort, trackerOps] = await Promise.all([freePort(), freePort()]);
    simUrl = `http://127.0.0.1:${simPort}`;
    procs.push(
      spawnTs('apps/chain-ingest/src/main.ts', { ...common, STREAM_SECRET: secret, PORT: String(ingestPort), OPS_PORT: String(ingestOps) }),
      spawnTs('apps/chain-parser/src/main.ts', { ...common, OPS_PORT: String(parserOps), CHAIN_PARSER_GROUP: `${prefix}parser` }),
      spawnTs('apps/tx-matcher/src/main.ts', { ...common, OPS_PORT: String(matcherOps), TX_MATCHER_GROUP: `${prefix}matcher`, TX_MATCHER_CHANGES_GROUP_PREFIX: `${prefix}changes`, TX_MATCHER_SESSION_TIMEOUT_MS: '6000' }),
      spawnTs('apps/order-tracker/src/main.ts', (trackerEnv = {
        ...common, OPS_PORT: String(trackerOps), CHAIN_RPC_DEFAULT_BASE: `${simUrl}/rpc`, ORDER_DEPOSIT_APP_ID: appId, ORDER_TRACKER_GROUP: `${prefix}tracker`, ORDER_TRACKER_SESSION_TIMEOUT_MS: '6000', ORDER_TRACKER_INTERVAL_MS: '500',
      })),
      spawnTs('apps/upstream-sim/src/main.ts', { PORT: String(simPort), OPS_PORT: String(simOps), LOG_LEVEL: 'warn', SIM_BLOCK_MS: '300', SIM_STREAM_URL: `http://127.0.0.1:${ingestPort}/stream`, STREAM_SECRET: secret, SIM_FUNDED_ACCOUNTS: payer.address }),
    );
    await Promise.all([waitReady(procs[0], ingestOps, 60_000), waitReady(procs[1], parserOps, 60_000), waitReady(procs[2], matcherOps, 60_000), waitReady(procs[3], trackerOps, 60_000), waitReady(procs[4], simOps, 60_000)]);
    producer = new TopicProducer({ kafka: createKafka({ brokers: env.kafkaBrokers, clientId: 'deposits-test', logger }), contracts: loadContracts(), logger, registry: new Registry(), topicPrefix: prefix });
    await producer.connect();
    events = await collectTopic(`${prefix}${TOPICS.ordersEvents.name}`);
  });

  after(async () => {
    await events?.stop();
    await producer?.disconnect();
    // the simulator first: it posts to chain-ingest until it stops
    for (const p of [...procs].reverse()) expect(await stopProcess(p), 'clean exit').to.equal(0);
    await db?.destroy();
  });

  /**
   * Pays `address` on the simulated chain, again every few seconds until `done` says the payment
   * was seen: a block the matcher reads before it learned the address (another topic) pays nobody,
   * as on a real chain. Returns the hashes paid.
   */
  const payUntil = async (address: string, amount: bigint, done: () => Promise<boolean>): Promise<string[]> => {
    const paid: string[] = [];
    const deadline = Date.now() + 90_000;
    while (!(await done())) {
      if (Date.now() > deadline) throw new Error(`${address} not seen paid (${paid.length} payments)`);
      paid.push(await chain.pay(payer, address, amount));
      const waitUntil = Date.now() + 4000;
      while (Date.now() < waitUntil && !(await done())) await new Promise((r) => setTimeout(r, 200));
    }
    return paid;
  };

  let firstOrderId = '';

  it('an order paid by a real block moves to Exchanging with the deposit transaction, with its event', async () => {
    const orders = new OrderRepository(db);
    const order = await orders.insert(orderFixture({ amount_in: '123400000000000000' }));
    firstOrderId = order.id;
    // the registration the gateway makes after creating an order
    await new ApiKeyRepository(db).createApp(appId, 'deposits test');
    const changes = [{ chainType: 'ethereum' as const, adds: [order.deposit_address], removes: [] }];
    await new MonitoredAddressRepository(db).apply(appId, changes, () =>
      producer.publish(TOPICS.addressesChanges, changeMessages(appId, changes, Date.now()).map((value) => ({ value }))),
    );

    // The change and the blocks travel on different topics: a block the matcher sees before it
    // applied the change pays nobody, as on a real chain a payment before registration would.
    // A new block (new transaction) every few seconds until one is matched.
    const posted = await payUntil(order.deposit_address, 123_400_000_000_000_000n, async () => (await orders.findById(order.id))?.state === 'Exchanging');
    const stored = (await orders.findById(order.id))!;
    expect(stored).to.include({ state: 'Exchanging', deposit_amount: '123400000000000000' });
    expect(posted).to.include(stored.deposit_tx_hash);
    // a payment sent again while the first was on its way is an extra deposit on the record, not a state change
    expect((await orders.audit(order.id)).filter((a) => a.event !== 'extra_deposit').map((a) => [a.from_state, a.to_state, a.event])).to.deep.equal([
      [null, 'Depositing', 'created'],
      ['Depositing', 'Exchanging', 'deposit'],
    ]);
    const mine = () => events.messages.map((m) => JSON.parse(m.value!.toString()) as OrderEventMessage).filter((e) => e.order_no === order.order_no);
    await waitFor(() => mine().some((e) => e.event === 'deposit'), { timeoutMs: 20_000, what: 'deposit event on orders.events.v1' });
    expect(mine().find((e) => e.event === 'deposit')).to.include({ from_state: 'Depositing', to_state: 'Exchanging' });
    const metrics = parsePrometheusText(await (await fetch(`http://127.0.0.1:${trackerOps}/metrics`)).text());
    const transitions = metrics.samples.filter((x) => x.name === 'chainpipe_agg_order_transitions_total' && x.labels.event === 'deposit');
    expect(transitions.reduce((n, x) => n + x.value, 0)).to.be.greaterThan(0);
  });

  it('a tracker killed (SIGKILL) and restarted picks up the deposits pushed meanwhile; nothing is applied twice', async () => {
    const orders = new OrderRepository(db);
    const firstBefore = await orders.audit(firstOrderId);
    procs[trackerIndex].kill('SIGKILL');
    await procs[trackerIndex].exited;
    const order = await orders.insert(orderFixture({ amount_in: '55500000000000000' }));
    const changes = [{ chainType: 'ethereum' as const, adds: [order.deposit_address], removes: [] }];
    await new MonitoredAddressRepository(db).apply(appId, changes, () =>
      producer.publish(TOPICS.addressesChanges, changeMessages(appId, changes, Date.now()).map((value) => ({ value }))),
    );
    // pushes land while no tracker runs: wait until tx.push.v1 holds one for this order
    const pushTopic = `${prefix}${TOPICS.txPush.name}`;
    const pushes = await collectTopic(pushTopic);
    try {
      await payUntil(order.deposit_address, 55_500_000_000_000_000n, async () => pushes.messages.some((m) => m.value!.toString().includes(order.deposit_address)));
    } finally {
      await pushes.stop();
    }
    expect((await orders.findById(order.id))!.state, 'nobody consumed it yet').to.equal('Depositing');
    trackerOps = await freePort();
    procs[trackerIndex] = spawnTs('apps/order-tracker/src/main.ts', { ...trackerEnv, OPS_PORT: String(trackerOps) });
    await waitReady(procs[trackerIndex], trackerOps, 60_000);
    await waitFor(async () => (await orders.findById(order.id))?.state === 'Exchanging', { timeoutMs: 60_000, what: 'the restarted tracker applied the deposit' });
    expect((await orders.audit(order.id)).filter((a) => a.event === 'deposit')).to.have.length(1);
    expect(await orders.audit(firstOrderId), 'the first order is untouched by the restart').to.deep.equal(firstBefore);
  });
});
