import { Kafka, logLevel, type Admin, type KafkaMessage } from 'kafkajs';
import { TOPICS, type TopicSpec } from '@chainpipe/contracts';
import { ensureTopics, topicDefinitions } from '@chainpipe/kafka';
import { testEnv } from './env';
import { waitFor } from './wait';

/** A quiet kafkajs client for test-side reading and writing (independent of the code under test). */
export function testKafka(clientId = 'chainpipe-test'): Kafka {
  return new Kafka({ clientId, brokers: testEnv().kafkaBrokers, logLevel: logLevel.NOTHING });
}

/**
 * Every topic of `specs` (under `prefix`) with its leaders. On a broker or cluster just started,
 * a broker may not know yet a topic the controller has just created (kafkajs then fails waiting
 * for its leaders with "does not host this topic-partition"); creating is idempotent, so it is
 * simply tried again.
 */
export async function createTopicsWithLeaders(admin: Admin, specs: readonly TopicSpec[], opts: { prefix?: string; replicationFactor?: number } = {}): Promise<void> {
  await waitFor(
    async () => {
      await ensureTopics(admin, specs, opts);
      // A loaded broker can still answer "unknown topic" to the next client's metadata request
      // after the creation returned: wait until the metadata of every topic is served.
      await admin.fetchTopicMetadata({ topics: topicDefinitions(specs, opts.prefix ?? '').map((d) => d.topic) });
      return true;
    },
    { timeoutMs: 60_000, intervalMs: 500, what: 'the topics with their leaders' },
  );
}

/**
 * Deletes every topic whose name starts with `prefix` (a run's own topics), returning how many:
 * a bench's topics keep what it produced for the broker's retention, and runs of the benches
 * that post megabyte blocks left tens of gigabytes behind on a development machine.
 */
export async function deleteTopicsWithPrefix(kafka: Kafka, prefix: string): Promise<number> {
  if (!prefix) throw new Error('deleteTopicsWithPrefix needs a prefix');
  const admin = kafka.admin();
  await admin.connect();
  try {
    const topics = (await admin.listTopics()).filter((t) => t.startsWith(prefix));
    if (topics.length) await admin.deleteTopics({ topics, timeout: 30_000 });
    return topics.length;
  } finally {
    await admin.disconnect();
  }
}

/** Creates every registry topic (and DLQ) under a prefix, as `make up` does without one. */
export async function createRegistryTopics(prefix: string, specs: readonly TopicSpec[] = Object.values(TOPICS)): Promise<void> {
  const admin = testKafka().admin();
  await admin.connect();
  try {
    await createTopicsWithLeaders(admin, specs, { prefix });
  } finally {
    await admin.disconnect();
  }
}

/**
 * Reads a topic from the beginning with a throwaway group until `count` messages arrived (or
 * the timeout passed) and everything written before that was read too, then leaves: so a test
 * can assert "exactly" without waiting a grace period. The reader is plain kafkajs, not our consumer.
 */
export async function readTopic(topic: string, count: number, timeoutMs = 20_000): Promise<KafkaMessage[]> {
  const reader = await collectTopic(topic);
  try {
    await waitFor(() => reader.messages.length >= count, { timeoutMs, what: `${count} messages on ${topic} (have ${reader.messages.length})` }).catch((err) => {
      if (reader.messages.length < count) throw err;
    });
    return await reader.settled(timeoutMs);
  } finally {
    await reader.stop();
  }
}

/** The end offset (next offset to be written) of every partition of a topic. */
export async function endOffsets(topic: string): Promise<Map<number, number>> {
  const admin = testKafka().admin();
  await admin.connect();
  try {
    return new Map((await admin.fetchTopicOffsets(topic)).map((p) => [p.partition, Number(p.high)]));
  } finally {
    await admin.disconnect();
  }
}

/**
 * Waits until a consumer group has committed every message written to `topic` so far. Our
 * consumers commit only after their work and its produces are done, so once this holds, all
 * the output of that input exists: "nothing more will come" without sleeping.
 */
export async function groupCaughtUp(groupId: string, topic: string, timeoutMs = 30_000): Promise<void> {
  const ends = await endOffsets(topic);
  const admin = testKafka().admin();
  await admin.connect();
  try {
    await waitFor(
      async () => {
        const [res] = await admin.fetchOffsets({ groupId, topics: [topic] });
        const committed = new Map((res?.partitions ?? []).map((p) => [p.partition, Number(p.offset)]));
        return [...ends].every(([partition, end]) => end === 0 || (committed.get(partition) ?? -1) >= end);
      },
      { timeoutMs, intervalMs: 50, what: `group ${groupId} to commit everything on ${topic}` },
    );
  } finally {
    await admin.disconnect();
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
  /**
   * Waits until every message written to the topic before this call has been read (the
   * partitions' end offsets), then gives `messages`: after the producing side is done, nothing
   * more will arrive, so "exactly N" holds without a grace period.
   */
  settled(timeoutMs?: number): Promise<KafkaMessage[]>;
  stop(): Promise<void>;
}

/**
 * Reads a topic from the beginning into `messages` until stopped (plain kafkajs, a throwaway
 * group): for tests that wait on conditions over a stream whose final length they do not know.
 */
export async function collectTopic(topic: string): Promise<TopicCollector> {
  const consumer = testKafka().consumer({ groupId: `collector-${topic}-${Date.now()}-${Math.random().toString(36).slice(2)}`, maxBytesPerPartition: 32 * 1024 * 1024 });
  const messages: KafkaMessage[] = [];
  /** Per partition, the offset after the last message read. */
  const position = new Map<number, number>();
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({
    eachMessage: async ({ partition, message }) => {
      // A rebalance of the reader's own group re-delivers from its last commit: each offset is
      // kept once, so `messages` is what the log holds (a producer's duplicates have offsets of their own).
      const offset = Number(message.offset);
      if (offset < (position.get(partition) ?? 0)) return;
      messages.push(message);
      position.set(partition, offset + 1);
    },
  });
  return {
    messages,
    settled: async (timeoutMs = 20_000) => {
      const ends = await endOffsets(topic);
      await waitFor(() => [...ends].every(([partition, end]) => end === 0 || (position.get(partition) ?? 0) >= end), {
        timeoutMs,
        intervalMs: 20,
        what: `every message on ${topic} read (have ${messages.length})`,
      });
      return messages;
    },
    stop: () => consumer.disconnect(),
  };
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
