import { bool, int, oneOf, secret } from '@chainpipe/runtime';
import { httpServerConfig, rateLimitField, trustedProxiesField } from '@chainpipe/http';
import { kafkaConfig } from '@chainpipe/kafka';
import { redisConfig } from '@chainpipe/redis';

export const ingestConfig = {
  ...kafkaConfig,
  ...redisConfig,
  ...httpServerConfig('chain-ingest'),
  STREAM_SECRET: secret({ doc: 'value streamers send in Content-Secret-X on POST /stream' }),
  RATE_LIMIT_TRUSTED_PROXIES: trustedProxiesField(),
  RATE_LIMIT_STREAM_PER_CLIENT: rateLimitField({ default: '30000/1m', doc: '`POST /stream` requests of a client address (the streamer\'s, or anyone\'s without the secret), every copy counted together in Redis: far above a provider\'s block rate' }),
  RATE_LIMIT_WEBHOOK_PER_CLIENT: rateLimitField({ default: '6000/1m', doc: '`POST /webhook` requests of a client address, every copy counted together in Redis' }),
  WEBHOOK_QUICKNODE_SECURITY_TOKEN: secret({
    default: '',
    doc: 'security token of the QuickNode stream posting to `POST /webhook`: when set, a delivery without a valid X-QN-Signature (HMAC-SHA256 of nonce + timestamp + body) is refused with 401',
  }),
  WEBHOOK_QUICKNODE_MAX_AGE_SECONDS: int({ default: 300, min: 0, max: 86_400, doc: 'how far X-QN-Timestamp of a signed `/webhook` delivery may be from now (a replayed capture is refused); 0: not checked' }),
  WEBHOOK_ALLOW_UNVERIFIED: bool({
    default: false,
    doc: 'accept `POST /webhook` from anyone, as the spec has it, with no verification method configured: required for a production start (NODE_ENV=production) without WEBHOOK_QUICKNODE_SECURITY_TOKEN, so the opt-out is explicit',
  }),
  NODE_ENV: oneOf(['development', 'test', 'production'] as const, { default: 'development', doc: 'production (the image sets it) refuses to start while `POST /webhook` has no verification method, unless WEBHOOK_ALLOW_UNVERIFIED' }),
  INGEST_BODY_LIMIT_BYTES: int({ default: 16 * 1024 * 1024, min: 1024, max: 17 * 1024 * 1024, doc: 'largest accepted body after decompression; must stay below the topic max.message.bytes' }),
};
