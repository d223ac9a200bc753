import type { Kafka } from 'kafkajs';
import type { ServiceHost } from '@chainpipe/runtime';
import { loadContracts, type Contracts, type TopicSpec } from '@chainpipe/contracts';
import { createKafka } from './client';
import { installKafkajsReplacements, kafkajsReplacementsComponent } from './kafkajs-replacements';
import type { KafkaConfig } from './config';
import { BatchConsumer, type BatchConsumerOptions } from './consumer';
import { TopicProducer, type TopicProducerOptions } from './producer';

/** What a consumer app decides; the kit fills in the client, contracts, producer, metrics and prefix. */
export type ConsumeOptions<T> = Omit<BatchConsumerOptions<T>, 'kafka' | 'spec' | 'contracts' | 'producer' | 'logger' | 'registry' | 'topicPrefix' | 'onFatal'> & {
  /** The producer of its dead letters; the app's producer by default. */
  producer?: TopicProducer;
};

export interface KafkaKit {
  readonly kafka: Kafka;
  readonly contracts: Contracts;
  /**
   * The app's one producer: connected on first call, flushed and closed after every entry point.
   * It publishes only to topics whose registry entry names the app among their `producers`.
   */
  producer(): Promise<TopicProducer>;
  /**
   * A consumer of `spec` as an entry point of the app: it joins its group once the app is
   * wired, and on shutdown it stops before the producer and pools its handler uses.
   */
  consume<T>(spec: TopicSpec<T>, opts: ConsumeOptions<T>): Promise<BatchConsumer<T>>;
}

/** Adds Kafka to an app: one client named after the app, one producer, any number of consumers. */
export function addKafka(
  svc: ServiceHost<KafkaConfig>,
  opts: { contracts?: Contracts; producer?: Partial<Pick<TopicProducerOptions, 'lingerMs' | 'maxBatchMessages'>> } = {},
): KafkaKit {
  const { config, logger, registry } = svc;
  const contracts = opts.contracts ?? loadContracts();
  const kafka = createKafka({ brokers: config.KAFKA_BROKERS, clientId: `${config.KAFKA_CLIENT_ID}-${svc.name}`, logger });
  // which of kafkajs' modules it runs replaced: a metric, and readiness fails while one is not
  svc.use(kafkajsReplacementsComponent(installKafkajsReplacements(), registry));
  let producer: Promise<TopicProducer> | undefined;
  const kit: KafkaKit = {
    kafka,
    contracts,
    producer: () => {
      producer ??= (async () => {
        const p = new TopicProducer({ kafka, contracts, logger, registry, app: svc.name, topicPrefix: config.KAFKA_TOPIC_PREFIX, publishTimeoutMs: config.KAFKA_PUBLISH_TIMEOUT_MS, ...opts.producer });
        await p.connect();
        svc.use({ name: 'kafka-producer', health: () => p.health(), stop: () => p.disconnect() });
        return p;
      })();
      return producer;
    },
    consume: async <T>(spec: TopicSpec<T>, consumeOpts: ConsumeOptions<T>) => {
      const { producer: dlqProducer, ...rest } = consumeOpts;
      const consumer = new BatchConsumer<T>({
        ...rest,
        kafka,
        spec,
        contracts,
        producer: dlqProducer ?? (await kit.producer()),
        logger,
        registry,
        topicPrefix: config.KAFKA_TOPIC_PREFIX,
        onFatal: (reason, err) => svc.lifecycle.fail(reason, err),
      });
      svc.serve({
        name: `kafka-consumer:${spec.name}`,
        health: () => consumer.health(),
        ready: () => consumer.ready(),
        start: async () => {
          await consumer.start();
          return { group: consumeOpts.groupId };
        },
        stop: () => consumer.stop(),
      });
      return consumer;
    },
  };
  return kit;
}
