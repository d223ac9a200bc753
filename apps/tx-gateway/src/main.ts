import { parseChainOrigins } from '@chainpipe/chains';
import { ApiKeyRepository, addPostgres } from '@chainpipe/db';
import { addHttpServer, createKeyResolver } from '@chainpipe/http';
import { addKafka } from '@chainpipe/kafka';
import { SecretBox, runService } from '@chainpipe/runtime';
import { createTxGatewayApp } from './app';
import { txGatewayConfig } from './config';

runService('tx-gateway', txGatewayConfig, async (svc) => {
  const { config, logger, registry } = svc;
  const db = addPostgres(svc, { statementTimeoutMs: config.REQUEST_TIMEOUT_MS });
  const kafka = addKafka(svc);
  const keys = new ApiKeyRepository(db);
  const app = createTxGatewayApp({
    db,
    contracts: kafka.contracts,
    producer: await kafka.producer(),
    logger,
    registry,
    resolveKey: createKeyResolver((keyId) => keys.findKey(keyId)),
    origins: parseChainOrigins(config.CHAIN_RPC_URLS, config.CHAIN_RPC_DEFAULT_BASE || null),
    rpcTimeoutMs: config.CHAIN_RPC_TIMEOUT_MS,
    secretBox: new SecretBox(config.WEBHOOK_SECRET_KEY),
    allowPrivateWebhookTargets: config.ALLOW_PRIVATE_WEBHOOK_TARGETS,
    now: Date.now,
    timeoutMs: config.REQUEST_TIMEOUT_MS,
    bodyLimitBytes: config.BODY_LIMIT_BYTES,
  });
  addHttpServer(svc, app);
});
