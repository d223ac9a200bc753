import { channelAdaptersConfig } from '@chainpipe/aggregator';
import { depositAddressServiceConfig, depositKeysConfig } from '@chainpipe/custody';
import { dbConfig } from '@chainpipe/db';
import { httpServerConfig } from '@chainpipe/http';
import { kafkaConfig } from '@chainpipe/kafka';
import { redisConfig } from '@chainpipe/redis';
import { int } from '@chainpipe/runtime';
import { orderConfig } from './orders/config';

export const aggregatorGatewayConfig = {
  ...dbConfig,
  ...redisConfig,
  ...kafkaConfig,
  ...httpServerConfig('aggregator-gateway'),
  BODY_LIMIT_BYTES: int({ default: 1024 * 1024, min: 1024, doc: 'largest accepted request body (413 above it)' }),
  ...channelAdaptersConfig,
  QUOTE_UPSTREAM_TIMEOUT_MS: int({ default: 60_000, min: 100, doc: 'per-channel upstream timeout of the quote stream, also the provider call deadline of its quotes (an error event, then the others continue)' }),
  QUOTE_HEARTBEAT_MS: int({ default: 15_000, min: 100, doc: 'comment line on a quiet quote stream so that proxies keep it open' }),
  ...orderConfig,
  ...depositKeysConfig,
  ...depositAddressServiceConfig,
};
