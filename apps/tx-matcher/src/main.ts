import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { Gauge } from 'prom-client';
import { TOPICS, loadContracts, type AddressChangeMessage, type ChainTxMessage } from '@chainpipe/contracts';
import { createDb, dbComponent } from '@chainpipe/db';
import { BatchConsumer, TopicProducer, createKafka } from '@chainpipe/kafka';
import { bootApp, errorMessage, runMain, sleep } from '@chainpipe/runtime';
import { createChainTxHandler } from './chain-tx.handler';
import { txMatcherConfig } from './config';
import { IndexSync } from './index-sync';
import { MatcherRepository } from './repository';

runMain(async () => {
  const { config, logger, registry, lifecycle } = bootApp('tx-matcher', txMatcherConfig);
  const contracts = loadContracts();

  const db = createDb({ url: config.DATABASE_URL, poolMax: config.DB_POOL_MAX, applicationName: 'tx-matcher' });
  lifecycle.add(dbComponent(db));
  const repo = new MatcherRepository(db);

  const kafka = createKafka({ brokers: config.KAFKA_BROKERS, clientId: `${config.KAFKA_CLIENT_ID}-tx-matcher`, logger });
  const producer = new TopicProducer({ kafka, contracts, logger, registry, topicPrefix: config.KAFKA_TOPIC_PREFIX, publishTimeoutMs: config.KAFKA_PUBLISH_TIMEOUT_MS });
  await producer.connect();
  lifecycle.add({ name: 'kafka-producer', health: () => producer.health(), stop: () => producer.disconnect() });

  const sync = new IndexSync();
  const indexSize = new Gauge({ name: 'chainpipe_matcher_index_addresses', help: 'Monitored (application, address) pairs in the index', registers: [registry] });
  const resyncs = new Gauge({ name: 'chainpipe_matcher_last_resync_seconds', help: 'Duration of the last full reload of tx.monitored_addresses', registers: [registry] });
  const reload = async () => {
    const t0 = Date.now();
    const rows = await sync.reload((onPage) => repo.scanMonitored(config.TX_MATCHER_SCAN_PAGE_SIZE, onPage));
    indexSize.set(sync.index.size);
    resyncs.set((Date.now() - t0) / 1000);
    logger.info({ msg: 'index_loaded', rows, ms: Date.now() - t0 });
  };

  // Every copy needs every change notice: a group of its own, reading from the latest offset.
  // It joins before the first load, so a change is either in the table scan or in the stream.
  const changes = new BatchConsumer<AddressChangeMessage>({
    kafka,
    groupId: `${config.TX_MATCHER_CHANGES_GROUP_PREFIX}-${os.hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`,
    spec: TOPICS.addressesChanges,
    contracts,
    producer,
    handler: async (records) => {
      for (const r of records) sync.applyChange(r.value);
      indexSize.set(sync.index.size);
    },
    logger,
    registry,
    topicPrefix: config.KAFKA_TOPIC_PREFIX,
    fromBeginning: false,
    onFatal: (reason, err) => lifecycle.fail(reason, err),
  });
  lifecycle.add({ name: 'address-changes-consumer', health: () => changes.health(), ready: () => changes.ready(), stop: () => changes.stop() });
  await changes.start();
  const joinDeadline = Date.now() + 60_000;
  while (!changes.ready()) {
    if (Date.now() > joinDeadline) throw new Error('address changes consumer did not join its group in 60 s');
    await sleep(50);
  }
  await reload();

  const resyncTimer = setInterval(() => {
    reload().catch((err) => logger.warn({ msg: 'resync_failed', err: errorMessage(err) }));
  }, config.TX_MATCHER_RESYNC_INTERVAL_MS);
  lifecycle.add({ name: 'resync', ready: () => sync.isLoaded, stop: async () => clearInterval(resyncTimer) });

  const handler = createChainTxHandler({
    index: () => sync.index,
    switches: (appIds) => repo.switches(appIds),
    publish: (messages) => producer.publish(TOPICS.txPush, messages),
    now: Date.now,
    logger,
    registry,
  });
  const consumer = new BatchConsumer<ChainTxMessage>({
    kafka,
    groupId: config.TX_MATCHER_GROUP,
    spec: TOPICS.chainTx,
    contracts,
    producer,
    handler,
    logger,
    registry,
    topicPrefix: config.KAFKA_TOPIC_PREFIX,
    maxRecordsPerCall: config.TX_MATCHER_MAX_RECORDS_PER_CALL,
    sessionTimeoutMs: config.TX_MATCHER_SESSION_TIMEOUT_MS,
    onFatal: (reason, err) => lifecycle.fail(reason, err),
  });
  // Added last, stopped first: it finishes its chunk while the producer and pool are still open.
  lifecycle.add({ name: 'chain-tx-consumer', health: () => consumer.health(), ready: () => consumer.ready(), stop: () => consumer.stop() });
  await consumer.start();

  const ops = await lifecycle.serveOps({ host: config.OPS_HOST, port: config.OPS_PORT, registry });
  lifecycle.markStarted();
  logger.info({ msg: 'started', opsPort: ops.port, group: config.TX_MATCHER_GROUP, addresses: sync.index.size });
});
