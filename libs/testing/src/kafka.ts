import { Kafka, logLevel, type KafkaMessage } from 'kafkajs';
import { TOPICS, type TopicSpec } from '@chainpipe/contracts';
import { ensureTopics } from '@chainpipe/kafka';
import { testEnv } from './env';
import { waitFor } from './wait';

/** A quiet kafkajs client for test-side reading and writing (independent of the code under test). */
export function testKafka(clientId = 'chainpipe-test'): Kafka {
  return new Kafka({ clientId, brokers: testEnv().kafkaBrokers, logLevel: logLevel.NOTHING });
}

/** Creates every registry topic (and DLQ) under a prefix, as `make up` does without one. */
export async function createRegistryTopics(prefix: string, specs: readonly TopicSpec[] = Object.values(TOPICS)): Promise<void> {
  const admin = testKafka().admin();
  await admin.connect();
  try {
    await ensureTopics(admin, specs, { prefix });
  } finally {
    await admin.disconnect();
  }
}

/**
 * Reads a topic from the beginning with a throwaway group until `count` messages arrived (or
 * the timeout passed), then leaves. The reader is plain kafkajs, not our consumer.
 */
export async function readTopic(topic: string, count: number, timeoutMs = 20_000): Promise<KafkaMessage[]> {
  const kafka = testKafka();
  const consumer = kafka.consumer({ groupId: `reader-${topic}-${Date.now()}-${Math.random().toString(36).slice(2)}`, maxBytesPerPartition: 32 * 1024 * 1024 });
  const got: KafkaMessage[] = [];
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({ eachMessage: async ({ message }) => void got.push(message) });
    await waitFor(() => got.length >= count, { timeoutMs, what: `${count} messages on ${topic} (have ${got.length})` }).catch((err) => {
      if (got.length < count) throw err;
    });
    // A short grace period lets extra (unexpected) messages show up, so tests can assert "exactly".
    await new Promise((r) => setTimeout(r, 300));
    return got;
  } finally {
    await consumer.disconnect();
  }
}

/** Offsets a group committed on a topic, summed over its partitions (records consumed), or -1 when none. */
export async function committedOffset(groupId: string, topic: string): Promise<number> {
  const admin = testKafka().admin();
  await admin.connect();
  try {
    const [res] = await admin.fetchOffsets({ groupId, topics: [topic] });
    const offsets = res?.partitions ?? [];
    return offsets.reduce((sum, p) => sum + Math.max(0, Number(p.offset)), 0) || -1;
  } finally {
    await admin.disconnect();
  }
}

export interface TopicCollector {
  /** Every message read so far, in arrival order. */
  readonly messages: KafkaMessage[];
  stop(): Promise<void>;
}

/**
 * Reads a topic from the beginning into `messages` until stopped (plain kafkajs, a throwaway
 * group): for tests that wait on conditions over a stream whose final length they do not know.
 */
export async function collectTopic(topic: string): Promise<TopicCollector> {
  const consumer = testKafka().consumer({ groupId: `collector-${topic}-${Date.now()}-${Math.random().toString(36).slice(2)}`, maxBytesPerPartition: 32 * 1024 * 1024 });
  const messages: KafkaMessage[] = [];
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({ eachMessage: async ({ message }) => void messages.push(message) });
  return { messages, stop: () => consumer.disconnect() };
}

/** Publishes JSON values to a physical topic with plain kafkajs (test input, not our producer). */
export async function produceJson(topic: string, messages: Array<{ key: string; value: unknown }>): Promise<void> {
  const producer = testKafka().producer();
  await producer.connect();
  try {
    await producer.send({ topic, acks: -1, messages: messages.map((m) => ({ key: m.key, value: JSON.stringify(m.value) })) });
  } finally {
    await producer.disconnect();
  }
}
