import { expect } from 'chai';
import { Registry } from 'prom-client';
import { networkByName } from '@chainpipe/chains';
import { TOPICS, dlqName, loadContracts, type AddressChangeMessage, type ChainTxMessage } from '@chainpipe/contracts';
import { BatchConsumer, TopicProducer, createKafka, processGroupId, type ConsumedRecord } from '@chainpipe/kafka';
import { NonRetryableError, RetryableError, createLogger } from '@chainpipe/runtime';
import { committedOffset, createRegistryTopics, evmBlockItem, parseFixture, parsePrometheusText, readTopic, testEnv, testKafka, topicMessage, uniquePrefix, waitFor } from '@chainpipe/testing';

const contracts = loadContracts();
const logger = createLogger({ name: 'test', level: 'silent' });

function change(i: number): AddressChangeMessage {
  return { app_id: 'app-1', chain_type: 'ethereum', adds: [`0x${i.toString(16).padStart(40, '0')}`], removes: [], changed_at: 1_700_000_000_000 + i };
}

describe('kafka pipeline: registry, typed producer, batch consumer (real broker)', () => {
  let prefix: string;
  let registry: Registry;
  let producer: TopicProducer;
  const consumers: BatchConsumer<unknown>[] = [];
  const fatal: unknown[] = [];

  beforeEach(async () => {
    prefix = uniquePrefix('kp');
    await createRegistryTopics(prefix, [TOPICS.addressesChanges]);
    registry = new Registry();
    const kafka = createKafka({ brokers: testEnv().kafkaBrokers, clientId: 'kp-test', logger });
    producer = new TopicProducer({ kafka, contracts, logger, registry, topicPrefix: prefix });
    await producer.connect();
  });

  afterEach(async () => {
    for (const c of consumers.splice(0)) await c.stop();
    await producer.disconnect();
    expect(fatal, 'no consumer should have failed').to.deep.equal([]);
  });

  function startConsumer(
    handler: (records: ConsumedRecord<AddressChangeMessage>[]) => Promise<void>,
    groupId = `${prefix}group`,
    retry = { retries: 5, initialMs: 20, maxMs: 100 },
    extra: { removeGroupOnStop?: boolean; fromBeginning?: boolean } = {},
  ) {
    const kafka = createKafka({ brokers: testEnv().kafkaBrokers, clientId: 'kp-consumer', logger });
    const consumer = new BatchConsumer<AddressChangeMessage>({
      kafka,
      groupId,
      spec: TOPICS.addressesChanges,
      contracts,
      producer,
      handler,
      logger,
      registry,
      topicPrefix: prefix,
      retry,
      onFatal: (_reason, err) => fatal.push(err),
      ...extra,
    });
    consumers.push(consumer as BatchConsumer<unknown>);
    return consumer.start().then(() => consumer);
  }

  it('round-trips typed messages through the registry, validated on both sides, and commits after the work', async () => {
    const sent = [1, 2, 3, 4, 5].map(change);
    await producer.publish(TOPICS.addressesChanges, sent.map((value) => ({ value })));
    const got: AddressChangeMessage[] = [];
    await startConsumer(async (records) => {
      for (const r of records) got.push(r.value);
    });
    await waitFor(() => got.length >= 5, { what: 'five records' });
    expect(got).to.deep.equal(sent);
    const topic = prefix + TOPICS.addressesChanges.name;
    await waitFor(async () => (await committedOffset(`${prefix}group`, topic)) === 5, { what: 'offset 5 committed' });
  });

  it('a per-process group (removeGroupOnStop) reads, commits, and is gone from the broker after a clean stop', async () => {
    const groupId = processGroupId(`${prefix}copy`);
    const got: AddressChangeMessage[] = [];
    const consumer = await startConsumer(
      async (records) => {
        for (const r of records) got.push(r.value);
      },
      groupId,
      undefined,
      { removeGroupOnStop: true },
    );
    await producer.publish(TOPICS.addressesChanges, [{ value: change(1) }]);
    await waitFor(() => got.length >= 1, { what: 'the record' });
    const admin = testKafka().admin();
    await admin.connect();
    try {
      const groupsNow = async () => (await admin.listGroups()).groups.map((g) => g.groupId);
      expect(await groupsNow()).to.include(groupId);
      consumers.splice(consumers.indexOf(consumer as BatchConsumer<unknown>), 1);
      await consumer.stop();
      expect(await groupsNow()).to.not.include(groupId);
    } finally {
      await admin.disconnect();
    }
  });

  it('refuses to publish a message that breaks its schema, and sends nothing', async () => {
    const bad = { ...change(1), adds: 'not-an-array' } as unknown as AddressChangeMessage;
    let error: unknown;
    try {
      await producer.publish(TOPICS.addressesChanges, [{ value: change(2) }, { value: bad }]);
    } catch (err) {
      error = err;
    }
    expect(error).to.be.instanceOf(NonRetryableError);
    expect((error as Error).message).to.match(/adds must be array/);
    // Nothing of the rejected call reached the topic: the valid message of the same call neither.
    await producer.publish(TOPICS.addressesChanges, [{ value: change(3) }]);
    const messages = await readTopic(prefix + TOPICS.addressesChanges.name, 1);
    expect(messages.map((m) => JSON.parse(m.value!.toString()).changed_at)).to.deep.equal([change(3).changed_at]);
  });

  it('dead-letters messages that fail decoding or their schema, with headers, and goes on with the next one', async () => {
    const topic = prefix + TOPICS.addressesChanges.name;
    const raw = testKafka().producer();
    await raw.connect();
    await raw.send({
      topic,
      messages: [
        { key: 'k1', value: '{"this is": not json' },
        { key: 'k2', value: JSON.stringify({ app_id: 'app-1' }) },
        { key: 'k3', value: JSON.stringify(change(7)), headers: { trace: 'abc' } },
      ],
    });
    await raw.disconnect();
    const got: ConsumedRecord<AddressChangeMessage>[] = [];
    await startConsumer(async (records) => void got.push(...records));
    await waitFor(() => got.length >= 1, { what: 'the valid record' });
    expect(got.map((r) => r.value)).to.deep.equal([change(7)]);
    expect(got[0].headers.trace).to.equal('abc');

    const dead = await readTopic(dlqName(topic), 2);
    expect(dead).to.have.length(2);
    const [d1, d2] = dead;
    expect(d1.value!.toString()).to.equal('{"this is": not json');
    expect(d1.key!.toString()).to.equal('k1');
    expect(d1.headers!['dlq-source-topic']!.toString()).to.equal(topic);
    expect(d1.headers!['dlq-source-partition']!.toString()).to.equal('0');
    expect(d1.headers!['dlq-source-offset']!.toString()).to.equal('0');
    expect(d1.headers!['dlq-error-code']!.toString()).to.equal('JSON_INVALID');
    expect(d2.headers!['dlq-source-offset']!.toString()).to.equal('1');
    expect(d2.headers!['dlq-error-code']!.toString()).to.equal('SCHEMA_INVALID');
    expect(d2.headers!['dlq-error']!.toString()).to.match(/chain_type is required/);
    await waitFor(async () => (await committedOffset(`${prefix}group`, topic)) === 3, { what: 'offset 3 committed' });
  });

  it('isolates a record its handler rejects for good: that one goes to the DLQ, the others are processed once', async () => {
    const topic = prefix + TOPICS.addressesChanges.name;
    const sent = [1, 2, 3, 4, 5].map(change);
    await producer.publish(TOPICS.addressesChanges, sent.map((value) => ({ value })));
    const done = new Map<number, number>();
    await startConsumer(async (records) => {
      // Poison: the whole call fails while it holds record 3, so the consumer retries one by one.
      if (records.some((r) => r.value.changed_at === sent[2].changed_at)) throw new NonRetryableError('record 3 is poison', 'STORE_REJECTED');
      for (const r of records) done.set(r.value.changed_at, (done.get(r.value.changed_at) ?? 0) + 1);
    });
    await waitFor(async () => (await committedOffset(`${prefix}group`, topic)) === 5, { what: 'offset 5 committed' });
    expect([...done.keys()].sort()).to.deep.equal([0, 1, 3, 4].map((i) => sent[i].changed_at));
    expect([...done.values()].every((n) => n === 1)).to.equal(true);
    const [dead] = await readTopic(dlqName(topic), 1);
    expect(JSON.parse(dead.value!.toString())).to.deep.equal(sent[2]);
    expect(dead.headers!['dlq-error-code']!.toString()).to.equal('STORE_REJECTED');
    expect(dead.headers!['dlq-source-offset']!.toString()).to.equal('2');
  });

  it('retries a retryable failure with backoff and then processes the batch', async () => {
    await producer.publish(TOPICS.addressesChanges, [{ value: change(9) }]);
    let calls = 0;
    const got: AddressChangeMessage[] = [];
    await startConsumer(async (records) => {
      calls += 1;
      if (calls <= 2) throw new RetryableError('database briefly unavailable');
      got.push(...records.map((r) => r.value));
    });
    await waitFor(() => got.length === 1, { what: 'processed after retries' });
    expect(calls).to.equal(3);
    const metrics = await registry.getSingleMetricAsString('chainpipe_consumer_retries_total');
    expect(metrics).to.match(/chainpipe_consumer_retries_total\{[^}]*\} 2/);
  });

  it('waits out a dependency outage far past its retry budget: not ready meanwhile, nothing committed, then each record once', async () => {
    await producer.publish(TOPICS.addressesChanges, [1, 2, 3].map((i) => ({ value: change(i) })));
    const topic = prefix + TOPICS.addressesChanges.name;
    let down = true;
    let calls = 0;
    const got: AddressChangeMessage[] = [];
    // Budget of 2 retries; the outage lasts as long as the test says (what pg says when Postgres is away).
    const consumer = await startConsumer(
      async (records) => {
        calls++;
        if (down) throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
        got.push(...records.map((r) => r.value));
      },
      `${prefix}group`,
      { retries: 2, initialMs: 10, maxMs: 40 },
    );
    await waitFor(() => calls >= 12, { what: 'six times the retry budget spent waiting' });
    expect(consumer.health()).to.deep.equal({ state: 'degraded', detail: 'waiting for a dependency: connect ECONNREFUSED 127.0.0.1:5432' });
    expect(await committedOffset(`${prefix}group`, topic)).to.equal(-1);
    down = false;
    await waitFor(() => got.length >= 3, { what: 'the three records once the dependency is back' });
    await waitFor(async () => (await committedOffset(`${prefix}group`, topic)) === 3, { what: 'offset 3 committed' });
    expect(got).to.deep.equal([1, 2, 3].map(change));
    await waitFor(() => consumer.health().state === 'ok', { what: 'ready again' });
  });

  it('stops within its deadline while the handler sleeps in a long backoff, and leaves the chunk for the next owner', async () => {
    await producer.publish(TOPICS.addressesChanges, [{ value: change(7) }]);
    const topic = prefix + TOPICS.addressesChanges.name;
    let calls = 0;
    // The first retry waits 15–30 s: far beyond the 5 s this stop is allowed.
    const stuck = await startConsumer(
      async () => {
        calls++;
        throw new Error('a bug that may be transient');
      },
      `${prefix}group`,
      { retries: 8, initialMs: 30_000, maxMs: 30_000 },
    );
    await waitFor(async () => /chainpipe_consumer_retries_total\{[^}]*\} 1/.test(await registry.getSingleMetricAsString('chainpipe_consumer_retries_total')), { what: 'the handler in backoff' });
    consumers.splice(consumers.indexOf(stuck as BatchConsumer<unknown>), 1);
    const started = Date.now();
    await stuck.stop();
    expect(Date.now() - started, 'stop() within 5 s of a 15–30 s backoff').to.be.below(5_000);
    expect(calls).to.equal(1);
    expect(await committedOffset(`${prefix}group`, topic), 'nothing committed').to.equal(-1);
    // The record was not lost: the group's next member processes it.
    const got: AddressChangeMessage[] = [];
    await startConsumer(async (records) => void got.push(...records.map((r) => r.value)));
    await waitFor(() => got.length === 1, { timeoutMs: 45_000, what: 'the record replayed to the next member' });
    expect(got).to.deep.equal([change(7)]);
  });
});

describe('kafka consumer group of two members (real broker)', () => {
  it('splits partitions between members, hands them over when one leaves, and processes every record once', async () => {
    const prefix = uniquePrefix('grp');
    await createRegistryTopics(prefix, [TOPICS.chainRaw]); // 3 partitions
    const registry = new Registry();
    const kafka = createKafka({ brokers: testEnv().kafkaBrokers, clientId: 'grp-test', logger });
    const producer = new TopicProducer({ kafka, contracts, logger, registry, topicPrefix: prefix });
    await producer.connect();
    // chain.raw.v1 is keyed by network: twenty network names spread the records over the partitions.
    const headers = (n: number) => ({ network: `net${n % 20}-test`, received_at: String(1_700_000_000_000 + n), content_encoding: 'identity', ingest_route: 'stream' as const });
    const publish = (from: number, to: number) =>
      producer.publish(TOPICS.chainRaw, Array.from({ length: to - from }, (_, i) => ({ value: Buffer.from(String(from + i)), headers: headers(from + i) })));
    const seen = new Map<string, Set<number>>();
    const fatal: unknown[] = [];
    const member = (name: string) =>
      new BatchConsumer<Buffer>({
        kafka: createKafka({ brokers: testEnv().kafkaBrokers, clientId: name, logger }),
        groupId: `${prefix}group`,
        spec: TOPICS.chainRaw,
        contracts,
        producer,
        logger,
        registry,
        topicPrefix: prefix,
        sessionTimeoutMs: 10_000,
        onFatal: (_r, err) => fatal.push(err),
        handler: async (records) => {
          for (const r of records) {
            const set = seen.get(r.value.toString()) ?? new Set<number>();
            set.add(r.partition);
            seen.set(r.value.toString(), set);
          }
        },
      });
    const a = member('member-a');
    const b = member('member-b');
    try {
      await a.start();
      await b.start();
      await waitFor(() => a.ready() && b.ready(), { timeoutMs: 30_000, what: 'both members joined' });
      await publish(0, 60);
      await waitFor(() => seen.size >= 60, { timeoutMs: 30_000, what: '60 records consumed by the group' });
      await b.stop(); // leaves the group: its partitions move to a
      await publish(60, 120);
      await waitFor(() => seen.size >= 120, { timeoutMs: 45_000, what: '120 records after the hand-over' });
      expect([...seen.keys()].map(Number).sort((x, y) => x - y)).to.deep.equal(Array.from({ length: 120 }, (_, i) => i));
      expect(new Set([...seen.values()].flatMap((s) => [...s])).size, 'records came from all 3 partitions').to.equal(3);
      const joins = parsePrometheusText(await registry.metrics()).samples.filter((x) => x.name === 'chainpipe_consumer_rebalances_total').reduce((n, x) => n + x.value, 0);
      expect(joins, 'each member joined, and a rejoined after b left').to.be.at.least(3);
      expect(fatal).to.deep.equal([]);
    } finally {
      // b may have stopped already; a second disconnect is harmless.
      await Promise.allSettled([a.stop(), b.stop()]);
      await producer.disconnect();
    }
  });
});

describe('kafka producer: per-topic batching within the registry limit (real broker)', () => {
  it('publishes one call of 12 MiB to one partition of chain.tx.v1 (4 MiB limit) in requests within the limit, and hands back a message alone above it', async () => {
    const prefix = uniquePrefix('big');
    await createRegistryTopics(prefix, [TOPICS.chainTx]);
    const kafka = createKafka({ brokers: testEnv().kafkaBrokers, clientId: 'big-test', logger });
    const producer = new TopicProducer({ kafka, contracts, logger, registry: new Registry(), topicPrefix: prefix, app: 'chain-parser' });
    await producer.connect();
    try {
      const base = parseFixture('evm', evmBlockItem(), networkByName('ethereum-mainnet')!).transactions.find((t) => t.internal_transactions.length > 0)!;
      // One transaction (one key, so one partition) whose internal calls are repeated up to the size wanted.
      const message = (id: number, bytes: number): { value: ChainTxMessage } => {
        const one = Buffer.byteLength(JSON.stringify(base.internal_transactions[0]));
        const internal = Array.from({ length: Math.ceil(bytes / one) }, (_, i) => base.internal_transactions[i % base.internal_transactions.length]);
        return { value: topicMessage(TOPICS.chainTx, { id: String(id), network: 'ethereum-mainnet', is_reorg_resend: false, tx: { ...base, internal_transactions: internal } }) };
      };
      const fitting = Array.from({ length: 12 }, (_, i) => message(i + 1, 1024 * 1024));
      const tooLarge = message(99, 5 * 1024 * 1024);

      const refused = await producer.publish(TOPICS.chainTx, [...fitting, tooLarge]).then(() => null, (err: NonRetryableError) => err);
      expect(refused?.code, 'publish refuses the call whole').to.equal('PRODUCE_TOO_LARGE');

      const left = await producer.publishSkippingTooLarge(TOPICS.chainTx, [fitting[0], tooLarge, ...fitting.slice(1)], { recordChecked: true });
      expect(left.map((l) => [l.message.value.id, l.limit])).to.deep.equal([['99', 4_194_304]]);
      const got = await readTopic(prefix + TOPICS.chainTx.name, 12, 30_000);
      expect(got.map((m) => (JSON.parse(m.value!.toString()) as ChainTxMessage).id)).to.deep.equal(fitting.map((m) => m.value.id));
      expect(new Set(got.map((m) => m.key!.toString()))).to.deep.equal(new Set([`ethereum:1:${base.tx_hash}`]));
    } finally {
      await producer.disconnect();
    }
  });
});
