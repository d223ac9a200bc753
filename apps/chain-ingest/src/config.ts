import { int, secret } from '@chainpipe/runtime';
import { httpServerConfig, rateLimitField } from '@chainpipe/http';
import { kafkaConfig } from '@chainpipe/kafka';
import { redisConfig } from '@chainpipe/redis';

export const ingestConfig = {
  ...kafkaConfig,
  ...redisConfig,
  ...httpServerConfig('chain-ingest'),
  STREAM_SECRET: secret({ doc: 'value streamers send in Content-Secret-X on POST /stream' }),
  RATE_LIMIT_STREAM_PER_CLIENT: rateLimitField({ default: '30000/1m', doc: '`POST /stream` requests of a client address (the streamer\'s, or anyone\'s without the secret), every copy counted together in Redis: far above a provider\'s block rate' }),
  RATE_LIMIT_WEBHOOK_PER_CLIENT: rateLimitField({ default: '6000/1m', doc: '`POST /webhook` requests of a client address, every copy counted together in Redis' }),
  INGEST_BODY_LIMIT_BYTES: int({ default: 16 * 1024 * 1024, min: 1024, max: 17 * 1024 * 1024, doc: 'largest accepted body after decompression; must stay below the topic max.message.bytes' }),
};
