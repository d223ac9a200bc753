import { TOPICS, loadContracts } from '@chainpipe/contracts';
import { createDb, dbComponent } from '@chainpipe/db';
import { BatchConsumer, TopicProducer, createKafka } from '@chainpipe/kafka';
import { bootApp, runMain } from '@chainpipe/runtime';
import { storeBlock } from '@chainpipe/tx-store';
import { createChainRawHandler } from './chain-raw.handler';
import { chainParserConfig } from './config';

import { normalizedTxCheck } from './tx-contract';

runMain(async () => {
  const { config, logger, registry, lifecycle } = bootApp('chain-parser', chainParserConfig);
  const contracts = loadContracts();

  const db = createDb({ url: config.DATABASE_URL, poolMax: config.DB_POOL_MAX, applicationName: 'chain-parser' });
  lifecycle.add(dbComponent(db));

  const kafka = createKafka({ brokers: config.KAFKA_BROKERS, clientId: `${config.KAFKA_CLIENT_ID}-chain-parser`, logger });
  const producer = new TopicProducer({ kafka, contracts, logger, registry, topicPrefix: config.KAFKA_TOPIC_PREFIX, publishTimeoutMs: config.KAFKA_PUBLISH_TIMEOUT_MS });
  await producer.connect();
  lifecycle.add({ name: 'kafka-producer', health: () => producer.health(), stop: () => producer.disconnect() });

  const handler = createChainRawHandler({
    storeBlock: (input) => storeBlock(db, input),
    publish: (messages) => producer.publish(TOPICS.chainTx, messages),
    checkTx: normalizedTxCheck(contracts),
    logger,
    registry,
  });
  const consumer = new BatchConsumer<Buffer>({
    kafka,
    groupId: config.CHAIN_PARSER_GROUP,
    spec: TOPICS.chainRaw,
    contracts,
    producer,
    handler,
    logger,
    registry,
    topicPrefix: config.KAFKA_TOPIC_PREFIX,
    maxRecordsPerCall: config.CHAIN_PARSER_MAX_RECORDS_PER_CALL,
    onFatal: (reason, err) => lifecycle.fail(reason, err),
  });
  // Added last, stopped first: it stops fetching and finishes its chunk while the pool and
  // producer it uses are still open.
  lifecycle.add({ name: 'kafka-consumer', health: () => consumer.health(), ready: () => consumer.ready(), stop: () => consumer.stop() });
  await consumer.start();

  const ops = await lifecycle.serveOps({ host: config.OPS_HOST, port: config.OPS_PORT, registry });
  lifecycle.markStarted();
  logger.info({ msg: 'started', opsPort: ops.port, group: config.CHAIN_PARSER_GROUP });
});
