import { channelAdaptersConfig } from '@chainpipe/aggregator';
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
  BODY_LIMIT_BYTES: int({ default: 1024 * 1024, min: 1024 }),
  ...channelAdaptersConfig,
  ...orderConfig,
};
