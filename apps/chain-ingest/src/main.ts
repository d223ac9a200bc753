import { RateLimits, addHttpServer } from '@chainpipe/http';
import { addKafka } from '@chainpipe/kafka';
import { addRedis } from '@chainpipe/redis';
import { ConfigError, runService } from '@chainpipe/runtime';
import { createIngestApp } from './app';
import { ingestConfig } from './config';

runService('chain-ingest', ingestConfig, async (svc) => {
  const { config, logger, registry } = svc;
  // POST /webhook: the provider's signature when its token is set; in production no method at
  // all is an opt-out said in configuration, never a default (D173).
  const webhookVerifier = config.WEBHOOK_QUICKNODE_SECURITY_TOKEN ? { securityToken: config.WEBHOOK_QUICKNODE_SECURITY_TOKEN, maxAgeSeconds: config.WEBHOOK_QUICKNODE_MAX_AGE_SECONDS } : undefined;
  if (!webhookVerifier && config.NODE_ENV === 'production' && !config.WEBHOOK_ALLOW_UNVERIFIED) {
    throw new ConfigError(['POST /webhook has no verification method: set WEBHOOK_QUICKNODE_SECURITY_TOKEN (the stream\'s security token), or WEBHOOK_ALLOW_UNVERIFIED=true to accept anyone\'s deliveries']);
  }
  if (!webhookVerifier) logger.warn({ msg: 'webhook_unverified', detail: 'POST /webhook accepts deliveries without a signature check' });
  const kafka = addKafka(svc);
  const producer = await kafka.producer();
  // Redis keeps the rate limits' counts only: while it is away each copy counts in memory and
  // ingestion goes on, so it does not make the app unready (D180).
  const limits = new RateLimits({ redis: addRedis(svc, { gatesReadiness: false }), registry, logger, trustedProxies: config.RATE_LIMIT_TRUSTED_PROXIES });
  const app = createIngestApp({
    contracts: kafka.contracts,
    producer,
    logger,
    registry,
    streamSecret: config.STREAM_SECRET,
    webhookVerifier,
    bodyLimitBytes: config.INGEST_BODY_LIMIT_BYTES,
    timeoutMs: config.REQUEST_TIMEOUT_MS,
    rateLimits: {
      stream: limits.limit('ingest_stream', { perClient: config.RATE_LIMIT_STREAM_PER_CLIENT }),
      webhook: limits.limit('ingest_webhook', { perClient: config.RATE_LIMIT_WEBHOOK_PER_CLIENT }),
    },
  });
  addHttpServer(svc, app);
});
