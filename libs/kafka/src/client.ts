import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { Kafka, logLevel, type LogEntry, type Admin, type ITopicConfig } from 'kafkajs';
import type { Logger } from '@chainpipe/runtime';
import { dlqName, type TopicSpec } from '@chainpipe/contracts';
import { installKafkajsReplacements, logKafkajsReplacements } from './kafkajs-replacements';

/**
 * kafkajs logs a few expected conditions at ERROR while a fresh broker creates its internal
 * topics (`__consumer_offsets`); it retries them itself. They are noise, not incidents.
 */
const EXPECTED_NOISE = [/coordinator is loading/i, /group coordinator is not available/i, /There is no leader for this topic-partition/i];

function bridgeLogs(logger: Logger) {
  const log = logger.child({ component: 'kafkajs' });
  return () =>
    ({ level, log: entry }: LogEntry) => {
      const { message, ...extra } = entry;
      const fields = { msg: message, namespace: extra.namespace, broker: extra.broker, error: extra.error };
      if (EXPECTED_NOISE.some((re) => re.test(String(message)) || re.test(String(extra.error ?? '')))) {
        log.debug(fields);
        return;
      }
      if (level === logLevel.ERROR) log.error(fields);
      else if (level === logLevel.WARN) log.warn(fields);
      else if (level === logLevel.INFO) log.debug(fields); // kafkajs INFO is chatty (joins, fetches)
      else log.trace(fields);
    };
}

export interface KafkaClientOptions {
  brokers: readonly string[];
  clientId: string;
  logger: Logger;
}

export function createKafka(opts: KafkaClientOptions): Kafka {
  // Before the client's first record batch: every batch's checksum natively (see crc32c.ts), each
  // record and batch written at its exact size (record-encoder.ts), and each produce request
  // (produce-request.ts); one that did not take is logged (kafkajs-replacements.ts).
  logKafkajsReplacements(installKafkajsReplacements(), opts.logger);
  return new Kafka({
    clientId: opts.clientId,
    brokers: [...opts.brokers],
    logLevel: logLevel.INFO,
    logCreator: bridgeLogs(opts.logger),
    connectionTimeout: 3_000,
    requestTimeout: 30_000,
    retry: { initialRetryTime: 300, retries: 5, maxRetryTime: 5_000 },
  });
}

/**
 * The group of one process that must read every record itself (a live fan-out to its own
 * clients, an in-memory index): `<prefix>-<host>-<random>`, unique per start even with several
 * processes on one host. Consume it with `removeGroupOnStop` so a clean stop leaves nothing behind.
 */
export function processGroupId(prefix: string): string {
  return `${prefix}-${os.hostname()}-${randomBytes(3).toString('hex')}`;
}

/** Physical topic name of a spec under a prefix. */
export function topicName(spec: Pick<TopicSpec, 'name'>, prefix: string): string {
  return prefix + spec.name;
}

export interface TopicDefinition {
  topic: string;
  numPartitions: number;
  configs: Record<string, string>;
}

/**
 * Every physical topic of `specs` as topic creation makes it: each topic, then its dead-letter
 * topic (one partition, the source's configs). `max.message.bytes` is the spec's
 * `maxMessageBytes`, the same number the producer batches by. Pure; `ensureTopics` and the
 * Kubernetes topic manifest (scripts/k8s-topics.ts) both read it.
 */
export function topicDefinitions(specs: readonly TopicSpec[], prefix = ''): TopicDefinition[] {
  return specs.flatMap((spec) => {
    const name = topicName(spec, prefix);
    const { 'max.message.bytes': stated, ...others } = spec.configs ?? {};
    if (stated !== undefined) throw new Error(`${spec.name}: max.message.bytes comes from maxMessageBytes, not configs`);
    const configs = { 'max.message.bytes': String(spec.maxMessageBytes), ...others };
    return [
      { topic: name, numPartitions: spec.partitions, configs },
      { topic: dlqName(name), numPartitions: 1, configs },
    ];
  });
}

/**
 * Creates every topic of the registry (and its DLQ) that does not exist yet, and waits for
 * their leaders. Done before any consumer subscribes: kafkajs on KRaft fails a subscription to a
 * topic that does not exist yet.
 */
export async function ensureTopics(
  admin: Admin,
  specs: readonly TopicSpec[],
  opts: { prefix?: string; replicationFactor?: number } = {},
): Promise<string[]> {
  const prefix = opts.prefix ?? '';
  const replicationFactor = opts.replicationFactor ?? 1;
  const existing = new Set(await admin.listTopics());
  const wanted: ITopicConfig[] = topicDefinitions(specs, prefix)
    .filter((d) => !existing.has(d.topic))
    .map((d) => ({ topic: d.topic, numPartitions: d.numPartitions, replicationFactor, configEntries: Object.entries(d.configs).map(([n, v]) => ({ name: n, value: v })) }));
  if (wanted.length) await admin.createTopics({ topics: wanted, waitForLeaders: true });
  return wanted.map((t) => t.topic);
}
