import { int, secret, str } from '@chainpipe/runtime';
import { dbConfig } from '@chainpipe/db';
import { httpServerConfig } from '@chainpipe/http';
import { redisConfig } from '@chainpipe/redis';

export const marketGatewayConfig = {
  ...dbConfig,
  ...redisConfig,
  ...httpServerConfig('market-gateway'),
  BODY_LIMIT_BYTES: int({ default: 1024 * 1024, min: 1024 }),
  QUOTE_MAX_AGE_MS: int({ default: 600_000, min: 1_000, doc: 'quotes older than this (by their source timestamp) are not served' }),
  REFERENCE_REFRESH_MS: int({ default: 30_000, min: 100, doc: 'age of the in-memory tokens and fiats before a background reload (a lookup that misses reloads at once)' }),
  POOL_UPSTREAM_URL: str({ default: 'http://127.0.0.1:8090/geckoterminal/api/v2', doc: 'GeckoTerminal-style API base (https://api.geckoterminal.com/api/v2, or CoinGecko on-chain https://pro-api.coingecko.com/api/v3/onchain)' }),
  POOL_UPSTREAM_API_KEY: secret({ default: '', doc: 'sent as x-cg-pro-api-key when set' }),
  POOL_UPSTREAM_TIMEOUT_MS: int({ default: 5_000, min: 100 }),
  POOL_CACHE_TTL_MS: int({ default: 3_600_000, min: 1_000, doc: 'pool detail cache lifetime (spec: 1 hour)' }),
};
