import { channelAdaptersConfig } from '@chainpipe/aggregator';
import { depositAddressServiceConfig, depositKeysConfig } from '@chainpipe/custody';
import { dbConfig } from '@chainpipe/db';
import { httpServerConfig, rateLimitField, trustedProxiesField } from '@chainpipe/http';
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
  RATE_LIMIT_TRUSTED_PROXIES: trustedProxiesField(),
  RATE_LIMIT_QUOTE_STREAM_PER_CLIENT: rateLimitField({ default: '600/1m', doc: 'quote streams (`/api/v2/quote/stream`, GET and POST together) a client address may open, every gateway copy counted together (Redis)' }),
  RATE_LIMIT_ORDER_CREATE_PER_CLIENT: rateLimitField({ default: '1200/1m', doc: 'order creations (`POST /api/v1/integrator/orders`, each opens a provider exchange) of a client address, keyed or not, counted across copies: above the per-key limit, as an integrator backend creates the orders of its users from a few addresses' }),
  RATE_LIMIT_ORDER_CREATE_PER_KEY: rateLimitField({ default: '600/1m', doc: 'order creations of one integrator key, counted across copies (keyless orders count per client only)' }),
  ...orderConfig,
  ...depositKeysConfig,
  ...depositAddressServiceConfig,
};
