import { devKafkaPort, int, list, str, type ConfigOf } from '@chainpipe/runtime';

/** Kafka settings shared by every app that talks to the broker. */
export const kafkaConfig = {
  KAFKA_BROKERS: list({ default: [`127.0.0.1:${devKafkaPort()}`], doc: 'bootstrap brokers (use 127.0.0.1, not localhost: Node may resolve ::1 first)' }),
  KAFKA_CLIENT_ID: str({ default: 'chainpipe', doc: 'client id prefix' }),
  KAFKA_TOPIC_PREFIX: str({ default: '', doc: 'prefix of every physical topic name (test and tenant isolation)' }),
  KAFKA_PUBLISH_TIMEOUT_MS: int({ default: 10_000, min: 100, doc: 'a publish not acknowledged by then fails (ingest answers 503)' }),
};
export type KafkaConfig = ConfigOf<typeof kafkaConfig>;
