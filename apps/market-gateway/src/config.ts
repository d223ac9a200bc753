import { bool, int, secret, str, url } from '@chainpipe/runtime';
import { dbConfig } from '@chainpipe/db';
import { httpServerConfig, rateLimitField, trustedProxiesField } from '@chainpipe/http';
import { kafkaConfig } from '@chainpipe/kafka';
import { redisConfig } from '@chainpipe/redis';

export const marketGatewayConfig = {
  ...dbConfig,
  ...redisConfig,
  ...kafkaConfig,
  ...httpServerConfig('market-gateway'),
  BODY_LIMIT_BYTES: int({ default: 1024 * 1024, min: 1024, doc: 'largest accepted request body (413 above it)' }),
  QUOTE_MAX_AGE_MS: int({ default: 600_000, min: 1_000, doc: 'quotes older than this (by their source timestamp) are not served: left out of items' }),
  FIAT_RATES_MAX_AGE_MS: int({ default: 7_200_000, min: 1_000, doc: 'fiat rates older than this (by their source timestamp) are not served: no conversion to another fiat than USD (503), an empty rate list' }),
  REFERENCE_REFRESH_MS: int({ default: 30_000, min: 100, doc: 'age of the in-memory tokens and fiats before a background reload (a lookup that misses reloads at once)' }),
  POOL_UPSTREAM_URL: url({ protocols: ['http', 'https'], doc: 'GeckoTerminal-style API base (https://api.geckoterminal.com/api/v2, or CoinGecko on-chain https://pro-api.coingecko.com/api/v3/onchain)' }),
  POOL_UPSTREAM_API_KEY: secret({ default: '', doc: 'sent as x-cg-pro-api-key when set' }),
  POOL_UPSTREAM_TIMEOUT_MS: int({ default: 5_000, min: 100, doc: 'deadline of one pool detail or market look-up upstream' }),
  POOL_CACHE_TTL_MS: int({ default: 3_600_000, min: 1_000, doc: 'pool detail cache lifetime (spec: 1 hour)' }),
  KLINE_MARKET_API_URL: url({ protocols: ['http', 'https'], doc: 'CoinGecko REST API base of the market look-ups (https://pro-api.coingecko.com/api/v3)' }),
  MARKET_API_KEY: secret({ doc: 'CoinGecko API key (x-cg-pro-api-key) of the market look-ups' }),
  KLINE_MARKET_TIMEOUT_MS: int({ default: 10_000, min: 100, doc: 'a market look-up not answered by then is 99001' }),
  KLINE_WS_PING_MS: int({ default: 30_000, min: 100, doc: 'WebSocket keep-alive: ping interval; a connection that missed the previous ping is closed' }),
  KLINE_WS_MAX_BUFFERED_BYTES: int({ default: 1024 * 1024, min: 1024, doc: 'a WebSocket client with more queued unsent is too slow and is closed' }),
  KLINE_WS_MAX_CONNECTIONS_PER_KEY: int({ default: 200, min: 1, doc: 'open candlestick WebSocket connections (hub and topic sockets) per API key, counted across every copy (Redis); more are refused with 429 and the spec\'s 99001' }),
  KLINE_WS_CONNECTION_LEASE_MS: int({ default: 30_000, min: 300, doc: 'how long a connection holds its slot of the per-key cap unless its copy renews it (every third of this): the slots of a copy that died come back within it' }),
  RATE_LIMIT_TRUSTED_PROXIES: trustedProxiesField(),
  KLINE_DEBUG_ON_OPS: bool({
    default: false,
    doc: 'serve the debug routes (`/api/v1/admin/debug/*`, no authentication of their own) on the ops listener (OPS_HOST:OPS_PORT) only; the public port answers them 404',
  }),
  RATE_LIMIT_KLINE_ENSURE_PER_CLIENT: rateLimitField({ default: '30/1m', doc: '`POST /api/v1/admin/debug/ingester/ensure` calls (each makes the ingester resubscribe) of a client address, across copies' }),
  KLINE_HUB_GROUP_PREFIX: str({ default: 'market-gateway-hub', doc: 'consumer group prefix for kline.candles.v2; each gateway process adds its host and a random suffix so every copy sees every candle; the group is deleted on a clean stop' }),
};
