import { TOPICS } from '@chainpipe/contracts';
import { addPostgres } from '@chainpipe/db';
import { addKafka } from '@chainpipe/kafka';
import { SecretBox, periodicJob, runService } from '@chainpipe/runtime';
import { createWebhookDispatcher, webhookQueueMetrics } from '@chainpipe/webhooks';
import { webhookDispatcherConfig } from './config';

runService('webhook-dispatcher', webhookDispatcherConfig, async (svc) => {
  const { config, logger, registry } = svc;
  const db = addPostgres(svc);
  const kafka = addKafka(svc);
  const dispatcher = createWebhookDispatcher({
    db,
    secretBox: new SecretBox(config.WEBHOOK_SECRET_KEY),
    sender: {
      allowPrivate: config.ALLOW_PRIVATE_WEBHOOK_TARGETS,
      connectTimeoutMs: config.WEBHOOK_CONNECT_TIMEOUT_MS,
      responseTimeoutMs: config.WEBHOOK_RESPONSE_TIMEOUT_MS,
      maxResponseBytes: config.WEBHOOK_MAX_RESPONSE_BYTES,
      extraCa: config.WEBHOOK_CA_FILE?.pem,
    },
    logger,
    registry,
    concurrency: config.WEBHOOK_CONCURRENCY,
    callWaitMs: config.WEBHOOK_CALL_WAIT_MS,
  });

  await kafka.consume(TOPICS.txPush, {
    groupId: config.WEBHOOK_DISPATCHER_GROUP,
    sessionTimeoutMs: config.WEBHOOK_SESSION_TIMEOUT_MS,
    maxRecordsPerCall: config.WEBHOOK_MAX_RECORDS_PER_CALL,
    handler: (records, ctx) => dispatcher.handlePushes(records.map((r) => r.value), ctx.heartbeat),
  });

  // The live path's lock session and the attempts log of delivered live POSTs (written in the
  // background): closed and flushed after the consumer stopped, before Postgres closes.
  svc.serve({ name: 'live-delivery', stop: () => dispatcher.close() });
  // The retry scheduler: one pass at a time; a failed pass is logged and the next one retries.
  svc.serve(periodicJob({ name: 'retry-scheduler', intervalMs: config.WEBHOOK_SCHEDULER_INTERVAL_MS, run: () => dispatcher.drainDue(), logger, runAtStart: true }));
  // The attempts log keeps a few days; pruned in bounded steps so a backlog never makes one long delete.
  const retentionMs = config.WEBHOOK_ATTEMPTS_RETENTION_HOURS * 3600 * 1000;
  svc.serve(periodicJob({ name: 'attempts-prune', intervalMs: 60_000, run: () => dispatcher.pruneAttempts(retentionMs), logger }));
  // Queue size and oldest age for alerts; a count over the queue table every 15 s (a scrape interval).
  const queueMetrics = webhookQueueMetrics({ db, registry });
  svc.serve(periodicJob({ name: 'queue-metrics', intervalMs: 15_000, run: () => queueMetrics.refresh(), logger, runAtStart: true }));
});
