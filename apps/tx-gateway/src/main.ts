import { parseChainOrigins } from '@chainpipe/chains';
import { loadContracts } from '@chainpipe/contracts';
import { ApiKeyRepository, createDb, dbComponent } from '@chainpipe/db';
import { createKeyResolver, listen } from '@chainpipe/http';
import { TopicProducer, createKafka } from '@chainpipe/kafka';
import { SecretBox, bootApp, runMain } from '@chainpipe/runtime';
import { createTxGatewayApp } from './app';
import { txGatewayConfig } from './config';

runMain(async () => {
  const { config, logger, registry, lifecycle } = bootApp('tx-gateway', txGatewayConfig);
  const contracts = loadContracts();
  const origins = parseChainOrigins(config.CHAIN_RPC_URLS, config.CHAIN_RPC_DEFAULT_BASE || null);
  const secretBox = new SecretBox(config.WEBHOOK_SECRET_KEY);

  const db = createDb({ url: config.DATABASE_URL, poolMax: config.DB_POOL_MAX, applicationName: 'tx-gateway', statementTimeoutMs: config.REQUEST_TIMEOUT_MS });
  lifecycle.add(dbComponent(db));

  const kafka = createKafka({ brokers: config.KAFKA_BROKERS, clientId: `${config.KAFKA_CLIENT_ID}-tx-gateway`, logger });
  const producer = new TopicProducer({ kafka, contracts, logger, registry, topicPrefix: config.KAFKA_TOPIC_PREFIX, publishTimeoutMs: config.KAFKA_PUBLISH_TIMEOUT_MS });
  await producer.connect();
  lifecycle.add({ name: 'kafka-producer', health: () => producer.health(), stop: () => producer.disconnect() });

  const keys = new ApiKeyRepository(db);
  const app = createTxGatewayApp({
    db,
    contracts,
    producer,
    logger,
    registry,
    resolveKey: createKeyResolver((keyId) => keys.findKey(keyId)),
    origins,
    rpcTimeoutMs: config.CHAIN_RPC_TIMEOUT_MS,
    secretBox,
    allowPrivateWebhookTargets: config.ALLOW_PRIVATE_WEBHOOK_TARGETS,
    now: Date.now,
    timeoutMs: config.REQUEST_TIMEOUT_MS,
    bodyLimitBytes: config.BODY_LIMIT_BYTES,
  });
  const http = await listen(app, config.PORT, config.HOST);
  lifecycle.add({ name: 'http', stop: () => http.close() });

  const ops = await lifecycle.serveOps({ host: config.OPS_HOST, port: config.OPS_PORT, registry });
  lifecycle.markStarted();
  logger.info({ msg: 'started', port: http.address.port, opsPort: ops.port });
});
