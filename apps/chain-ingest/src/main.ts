import { RateLimits, addHttpServer } from '@chainpipe/http';
import { addKafka } from '@chainpipe/kafka';
import { addRedis } from '@chainpipe/redis';
import { runService } from '@chainpipe/runtime';
import { createIngestApp } from './app';
import { ingestConfig } from './config';

runService('chain-ingest', ingestConfig, async (svc) => {
  const { config, logger, registry } = svc;
  const kafka = addKafka(svc);
  const producer = await kafka.producer();
  // Redis keeps the rate limits' counts only: while it is away each copy counts in memory and
  // ingestion goes on, so it does not make the app unready (D180).
  const limits = new RateLimits({ redis: addRedis(svc, { gatesReadiness: false }), registry, logger });
  const app = createIngestApp({
    contracts: kafka.contracts,
    producer,
    logger,
    registry,
    streamSecret: config.STREAM_SECRET,
    bodyLimitBytes: config.INGEST_BODY_LIMIT_BYTES,
    timeoutMs: config.REQUEST_TIMEOUT_MS,
    rateLimits: {
      stream: limits.limit('ingest_stream', { perClient: config.RATE_LIMIT_STREAM_PER_CLIENT }),
      webhook: limits.limit('ingest_webhook', { perClient: config.RATE_LIMIT_WEBHOOK_PER_CLIENT }),
    },
  });
  addHttpServer(svc, app);
});
