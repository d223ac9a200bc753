import { int, secret } from '@chainpipe/runtime';
import { httpServerConfig } from '@chainpipe/http';
import { kafkaConfig } from '@chainpipe/kafka';

export const ingestConfig = {
  ...kafkaConfig,
  ...httpServerConfig('chain-ingest'),
  STREAM_SECRET: secret({ doc: 'value streamers send in Content-Secret-X on POST /stream' }),
  INGEST_BODY_LIMIT_BYTES: int({ default: 16 * 1024 * 1024, min: 1024, max: 17 * 1024 * 1024, doc: 'largest accepted body after decompression; must stay below the topic max.message.bytes' }),
};
