import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { Registry } from 'prom-client';
import { TOPICS, loadContracts, type TxPushMessage } from '@chainpipe/contracts';
import { ApiKeyRepository, createDb, type Knex } from '@chainpipe/db';
import { BatchConsumer, TopicProducer, createKafka } from '@chainpipe/kafka';
import { OrderRepository } from '@chainpipe/order-store';
import { createLogger } from '@chainpipe/runtime';
import { MonitoredAddressRepository, changeMessages } from '@chainpipe/tx-store';
import { createRegistryTopics, freePort, parsePrometheusText, spawnTs, stopProcess, testEnv, uniquePrefix, waitFor, waitReady, type RunningProcess } from '@chainpipe/testing';
import { OrderTracker } from '../../apps/order-tracker/src/tracker';
import { evmBlockPaying } from './deposit-block';
import { orderFixture } from './order-fixtures';

/**
 * A deposit through the real address monitoring pipeline: the deposit address registered as a
 * monitored address of the internal application (the gateway's way: table + addresses.changes.v1),
 * a real Ethereum block paying it posted to chain-ingest's /stream, chain-parser and tx-matcher as
 * processes, and the tracker's handler consuming tx.push.v1 with the consumer the app uses.
 */
describe('order deposits through /stream → chain-parser → tx-matcher → tx.push.v1 → tracker', function () {
  this.timeout(180_000);
  const env = testEnv();
  const secret = randomBytes(12).toString('hex');
  const appId = `deposits-${randomBytes(3).toString('hex')}`;
  const procs: RunningProcess[] = [];
  const logger = createLogger({ name: 'deposits-test', level: 'error' });
  const registry = new Registry();
  const fatal: unknown[] = [];
  let db: Knex;
  let prefix: string;
  let producer: TopicProducer;
  let consumer: BatchConsumer<TxPushMessage> | undefined;
  let ingestPort = 0;
  let matcherOps = 0;
  const matcherIndexSize = async (): Promise<number> => {
    const text = await (await fetch(`http://127.0.0.1:${matcherOps}/metrics`)).text();
    return parsePrometheusText(text).samples.find((x) => x.name === 'chainpipe_matcher_index_addresses')?.value ?? 0;
  };

  before(async () => {
    db = createDb({ url: env.databaseUrl, poolMax: 4 });
    prefix = uniquePrefix('deposits');
    await createRegistryTopics(prefix);
    const common = { KAFKA_BROKERS: env.kafkaBrokers.join(','), KAFKA_TOPIC_PREFIX: prefix, DATABASE_URL: env.databaseUrl, REDIS_URL: env.redisUrl, REDIS_KEY_PREFIX: prefix, LOG_LEVEL: 'warn' };
    const [ingestOps, parserOps] = await Promise.all([freePort(), freePort()]);
    matcherOps = await freePort();
    ingestPort = await freePort();
    procs.push(
      spawnTs('apps/chain-ingest/src/main.ts', { ...common, STREAM_SECRET: secret, PORT: String(ingestPort), OPS_PORT: String(ingestOps) }),
      spawnTs('apps/chain-parser/src/main.ts', { ...common, OPS_PORT: String(parserOps), CHAIN_PARSER_GROUP: `${prefix}parser` }),
      spawnTs('apps/tx-matcher/src/main.ts', { ...common, OPS_PORT: String(matcherOps), TX_MATCHER_GROUP: `${prefix}matcher`, TX_MATCHER_CHANGES_GROUP_PREFIX: `${prefix}changes`, TX_MATCHER_SESSION_TIMEOUT_MS: '6000' }),
    );
    await Promise.all([waitReady(procs[0], ingestOps, 60_000), waitReady(procs[1], parserOps, 60_000), waitReady(procs[2], matcherOps, 60_000)]);

    const kafka = createKafka({ brokers: env.kafkaBrokers, clientId: 'deposits-test', logger });
    const contracts = loadContracts();
    producer = new TopicProducer({ kafka, contracts, logger, registry, topicPrefix: prefix });
    await producer.connect();
    const tracker = new OrderTracker({
      db,
      producer,
      channels: { status: async () => Promise.reject(new Error('channel status is not part of this test')) },
      logger,
      registry,
      now: () => new Date(),
      depositAppId: appId,
      batchSize: 200,
      statusTimeoutMs: 1000,
    });
    consumer = new BatchConsumer<TxPushMessage>({
      kafka,
      groupId: `${prefix}tracker`,
      spec: TOPICS.txPush,
      contracts,
      producer,
      handler: (records) => tracker.handlePushes(records.map((r) => r.value)),
      logger,
      registry,
      topicPrefix: prefix,
      fromBeginning: true,
      onFatal: (_reason, err) => fatal.push(err),
    });
    await consumer.start();
  });

  after(async () => {
    await consumer?.stop();
    await producer?.disconnect();
    for (const p of procs) await stopProcess(p);
    await db?.destroy();
    expect(fatal).to.deep.equal([]);
  });

  it('an order paid by a real block moves to Exchanging with the deposit transaction', async () => {
    const orders = new OrderRepository(db);
    const order = await orders.insert(orderFixture({ amount_in: '123400000000000000' }));
    const indexBefore = await matcherIndexSize();
    // the registration the gateway makes after creating an order
    await new ApiKeyRepository(db).createApp(appId, 'deposits test');
    const changes = [{ chainType: 'ethereum' as const, adds: [order.deposit_address], removes: [] }];
    await new MonitoredAddressRepository(db).apply(appId, changes, () =>
      producer.publish(TOPICS.addressesChanges, changeMessages(appId, changes, Date.now()).map((value) => ({ key: appId, value }))),
    );

    const block = evmBlockPaying(order.deposit_address, 123_400_000_000_000_000n);
    // the block goes out once the matcher has taken the change in (separate topics, no order between them)
    await waitFor(async () => (await matcherIndexSize()) > indexBefore, { timeoutMs: 30_000, what: 'matcher indexed the deposit address' });
    const res = await fetch(`http://127.0.0.1:${ingestPort}/stream`, {
      method: 'POST',
      headers: { 'content-secret-x': secret, 'cl-stream-network': 'ethereum-mainnet', 'content-type': 'application/octet-stream' },
      body: block.body,
    });
    expect(res.status).to.equal(200);
    await waitFor(async () => (await orders.findById(order.id))?.state === 'Exchanging', { timeoutMs: 90_000, what: 'order Exchanging after the deposit' });
    const stored = (await orders.findById(order.id))!;
    expect(stored).to.include({ state: 'Exchanging', deposit_tx_hash: block.txHash, deposit_amount: '123400000000000000' });
    const audit = await orders.audit(order.id);
    expect(audit.map((a) => [a.from_state, a.to_state, a.event])).to.deep.equal([
      [null, 'Depositing', 'created'],
      ['Depositing', 'Exchanging', 'deposit'],
    ]);
  });
});
