/**
 * A real consumer app used by the crash tests: consumes addresses.changes.v1 through our
 * BatchConsumer and writes each record to an idempotent sink table (and an append-only
 * processing log, which shows replays). Slow on purpose (PER_RECORD_DELAY_MS) so a test can
 * kill it in the middle of a batch.
 */
import { TOPICS, loadContracts, type AddressChangeMessage } from '@chainpipe/contracts';
import { createDb, dbComponent } from '@chainpipe/db';
import { BatchConsumer, TopicProducer, createKafka, kafkaConfig } from '@chainpipe/kafka';
import { bootApp, int, runMain, sleep, str } from '@chainpipe/runtime';

runMain(async () => {
  const { config, logger, registry, lifecycle } = bootApp('sink-consumer', {
    ...kafkaConfig,
    DATABASE_URL: str(),
    GROUP_ID: str(),
    PER_RECORD_DELAY_MS: int({ default: 0, min: 0 }),
    MAX_RECORDS_PER_CALL: int({ default: 20, min: 1 }),
  });
  const db = createDb({ url: config.DATABASE_URL, poolMax: 2 });
  lifecycle.add(dbComponent(db));
  const contracts = loadContracts();
  const kafka = createKafka({ brokers: config.KAFKA_BROKERS, clientId: 'sink-consumer', logger });
  const producer = new TopicProducer({ kafka, contracts, logger, registry, topicPrefix: config.KAFKA_TOPIC_PREFIX });
  await producer.connect();
  lifecycle.add({ name: 'producer', stop: () => producer.disconnect() });
  const consumer = new BatchConsumer<AddressChangeMessage>({
    kafka,
    groupId: config.GROUP_ID,
    spec: TOPICS.addressesChanges,
    contracts,
    producer,
    logger,
    registry,
    topicPrefix: config.KAFKA_TOPIC_PREFIX,
    maxRecordsPerCall: config.MAX_RECORDS_PER_CALL,
    onFatal: (reason, err) => lifecycle.fail(reason, err),
    handler: async (records) => {
      for (const r of records) {
        const id = r.value.changed_at;
        await db('selftest.processing_log').insert({ id, pid: process.pid });
        await sleep(config.PER_RECORD_DELAY_MS);
        await db('selftest.sink').insert({ id }).onConflict('id').ignore();
      }
    },
  });
  lifecycle.add({ name: 'consumer', health: () => consumer.health(), ready: () => consumer.ready(), stop: () => consumer.stop() });
  await consumer.start();
  await lifecycle.serveOps({ host: '127.0.0.1', port: config.OPS_PORT, registry });
  lifecycle.markStarted();
});
