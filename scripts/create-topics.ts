import { TOPICS } from '@chainpipe/contracts';
import { createKafka, ensureTopics, kafkaConfig } from '@chainpipe/kafka';
import { createLogger, int, loadConfig } from '@chainpipe/runtime';

/** Creates every registry topic (and its DLQ) that is missing. Run before any consumer starts. */
async function main(): Promise<void> {
  const config = loadConfig({ ...kafkaConfig, KAFKA_REPLICATION_FACTOR: int({ default: 1, min: 1 }) }, process.env);
  const logger = createLogger({ name: 'create-topics', level: 'warn' });
  const admin = createKafka({ brokers: config.KAFKA_BROKERS, clientId: 'chainpipe-admin', logger }).admin();
  await admin.connect();
  try {
    const created = await ensureTopics(admin, Object.values(TOPICS), { prefix: config.KAFKA_TOPIC_PREFIX, replicationFactor: config.KAFKA_REPLICATION_FACTOR });
    console.log(created.length ? `created topics: ${created.join(', ')}` : 'topics up to date');
  } finally {
    await admin.disconnect();
  }
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
