import { loadContracts } from '@chainpipe/contracts';
import { listen } from '@chainpipe/http';
import { TopicProducer, createKafka } from '@chainpipe/kafka';
import { bootApp, runMain } from '@chainpipe/runtime';
import { createIngestApp } from './app';
import { ingestConfig } from './config';

runMain(async () => {
  const { config, logger, registry, lifecycle } = bootApp('chain-ingest', ingestConfig);
  const contracts = loadContracts();

  const kafka = createKafka({ brokers: config.KAFKA_BROKERS, clientId: `${config.KAFKA_CLIENT_ID}-chain-ingest`, logger });
  const producer = new TopicProducer({ kafka, contracts, logger, registry, topicPrefix: config.KAFKA_TOPIC_PREFIX, publishTimeoutMs: config.KAFKA_PUBLISH_TIMEOUT_MS });
  await producer.connect();
  lifecycle.add({ name: 'kafka-producer', health: () => producer.health(), stop: () => producer.disconnect() });

  const app = createIngestApp({ producer, logger, registry, streamSecret: config.STREAM_SECRET, bodyLimitBytes: config.INGEST_BODY_LIMIT_BYTES, timeoutMs: config.REQUEST_TIMEOUT_MS });
  const http = await listen(app, config.PORT, config.HOST);
  lifecycle.add({ name: 'http', stop: () => http.close() });

  const ops = await lifecycle.serveOps({ host: config.OPS_HOST, port: config.OPS_PORT, registry });
  lifecycle.markStarted();
  logger.info({ msg: 'started', port: http.address.port, opsPort: ops.port });
});
