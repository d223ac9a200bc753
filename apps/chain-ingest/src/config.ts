import { int, secret, str } from '@chainpipe/runtime';
import { kafkaConfig } from '@chainpipe/kafka';

export const ingestConfig = {
  ...kafkaConfig,
  HOST: str({ default: '127.0.0.1', doc: 'interface of the public port' }),
  PORT: int({ default: 8082, min: 0, max: 65535 }),
  OPS_PORT: int({ default: 9102, min: 0, max: 65535, doc: 'port of /metrics, /healthz, /readyz' }),
  STREAM_SECRET: secret({ doc: 'value streamers send in Content-Secret-X on POST /stream' }),
  INGEST_BODY_LIMIT_BYTES: int({ default: 16 * 1024 * 1024, min: 1024, max: 17 * 1024 * 1024, doc: 'largest accepted body after decompression; must stay below the topic max.message.bytes' }),
  REQUEST_TIMEOUT_MS: int({ default: 15_000, min: 100 }),
};
