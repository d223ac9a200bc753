import { TOPICS, loadContracts } from '@chainpipe/contracts';
import { createDb, dbComponent } from '@chainpipe/db';
import { BatchConsumer, TopicProducer, createKafka } from '@chainpipe/kafka';
import { QuoteStore } from '@chainpipe/price';
import { createRedis, redisComponent } from '@chainpipe/redis';
import { bootApp, runMain } from '@chainpipe/runtime';
import { priceWriterConfig } from './config';
import { quotesHandler } from './quotes.handler';

runMain(async () => {
  const { config, logger, registry, lifecycle } = bootApp('price-writer', priceWriterConfig);
  const contracts = loadContracts();

  const db = createDb({ url: config.DATABASE_URL, poolMax: config.DB_POOL_MAX, applicationName: 'price-writer' });
  lifecycle.add(dbComponent(db));
  const redis = createRedis({ url: config.REDIS_URL, keyPrefix: config.REDIS_KEY_PREFIX });
  lifecycle.add(redisComponent(redis));

  const kafka = createKafka({ brokers: config.KAFKA_BROKERS, clientId: `${config.KAFKA_CLIENT_ID}-price-writer`, logger });
  // Dead letters only.
  const producer = new TopicProducer({ kafka, contracts, logger, registry, topicPrefix: config.KAFKA_TOPIC_PREFIX, publishTimeoutMs: config.KAFKA_PUBLISH_TIMEOUT_MS });
  await producer.connect();
  lifecycle.add({ name: 'kafka-producer', health: () => producer.health(), stop: () => producer.disconnect() });

  const consumer = new BatchConsumer({
    kafka,
    groupId: config.PRICE_WRITER_GROUP,
    spec: TOPICS.priceQuotes,
    contracts,
    producer,
    handler: quotesHandler({ db, store: new QuoteStore(redis), registry, now: Date.now }),
    logger,
    registry,
    topicPrefix: config.KAFKA_TOPIC_PREFIX,
    maxRecordsPerCall: config.PRICE_WRITER_MAX_RECORDS_PER_CALL,
    onFatal: (reason, err) => lifecycle.fail(reason, err),
  });
  lifecycle.add({ name: 'consumer-price-quotes', health: () => consumer.health(), ready: () => consumer.ready(), stop: () => consumer.stop() });
  await consumer.start();

  const ops = await lifecycle.serveOps({ host: config.OPS_HOST, port: config.OPS_PORT, registry });
  lifecycle.markStarted();
  logger.info({ msg: 'started', opsPort: ops.port });
});
