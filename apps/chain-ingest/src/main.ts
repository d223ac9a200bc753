import { addHttpServer } from '@chainpipe/http';
import { addKafka } from '@chainpipe/kafka';
import { runService } from '@chainpipe/runtime';
import { createIngestApp } from './app';
import { ingestConfig } from './config';

runService('chain-ingest', ingestConfig, async (svc) => {
  const { config, logger, registry } = svc;
  const kafka = addKafka(svc);
  const producer = await kafka.producer();
  const app = createIngestApp({ contracts: kafka.contracts, producer, logger, registry, streamSecret: config.STREAM_SECRET, bodyLimitBytes: config.INGEST_BODY_LIMIT_BYTES, timeoutMs: config.REQUEST_TIMEOUT_MS });
  addHttpServer(svc, app);
});
