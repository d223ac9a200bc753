import { bool, int, secret, str } from '@chainpipe/runtime';
import { dbConfig } from '@chainpipe/db';
import { kafkaConfig } from '@chainpipe/kafka';
import { SENDER_DEFAULTS, webhookTrustConfig } from '@chainpipe/webhooks';

export const webhookDispatcherConfig = {
  ...kafkaConfig,
  ...dbConfig,
  WEBHOOK_DISPATCHER_GROUP: str({ default: 'webhook-dispatcher', doc: 'consumer group reading tx.push.v1 (copies share it)' }),
  WEBHOOK_SESSION_TIMEOUT_MS: int({ default: 30_000, min: 6_000, max: 300_000, doc: 'Kafka session timeout' }),
  WEBHOOK_SCHEDULER_INTERVAL_MS: int({ default: 500, min: 50, doc: 'how often the retry queue is checked for due batches' }),
  WEBHOOK_MAX_RECORDS_PER_CALL: int({
    default: 1_000,
    min: 1,
    max: 5_000,
    doc: 'tx.push.v1 records per handler call at most (fewer when fewer wait): the call pays one Postgres round trip for its applications\' locks, configurations and queues, and an application\'s pushes of a call go up to 100 per POST',
  }),
  WEBHOOK_CONCURRENCY: int({ default: 16, min: 1, max: 256, doc: 'applications POSTed to at the same time (live path, and each scheduler pass)' }),
  WEBHOOK_CALL_WAIT_MS: int({
    default: 500,
    min: 50,
    max: 10_000,
    doc: 'how long a consumer call or a scheduler pass waits for a receiver: one slower than this answers in the background (its transactions kept in the queue, its later ones queued behind), so it delays no other application by more than this',
  }),
  WEBHOOK_ATTEMPTS_RETENTION_HOURS: int({ default: 72, min: 1, doc: 'how long GET /app/webhook/attempts can show an attempt' }),
  WEBHOOK_CONNECT_TIMEOUT_MS: int({ default: SENDER_DEFAULTS.connectTimeoutMs, min: 100, doc: 'deadline to connect to a webhook target' }),
  WEBHOOK_RESPONSE_TIMEOUT_MS: int({ default: SENDER_DEFAULTS.responseTimeoutMs, min: 100, doc: 'from sending a POST to its response headers' }),
  WEBHOOK_MAX_RESPONSE_BYTES: int({ default: SENDER_DEFAULTS.maxResponseBytes, min: 0, doc: 'response bytes read at most (bodies are ignored)' }),
  ALLOW_PRIVATE_WEBHOOK_TARGETS: bool({ default: false, doc: 'development and tests only: POST over http and to loopback/private addresses' }),
  ...webhookTrustConfig,
  WEBHOOK_SECRET_KEY: secret({ doc: '32-byte key (64 hex chars) that decrypts stored webhook secrets (the same as tx-gateway’s)' }),
};
