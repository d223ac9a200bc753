import { dbConfig } from '@chainpipe/db';
import { kafkaConfig } from '@chainpipe/kafka';
import { UPSTREAM_INTERVALS } from '@chainpipe/kline';
import { redisConfig } from '@chainpipe/redis';
import { int, oneOf, secret, str, url } from '@chainpipe/runtime';

export const marketIngesterConfig = {
  ...kafkaConfig,
  ...dbConfig,
  ...redisConfig,
  MARKET_WS_URL: url({ protocols: ['ws', 'wss'], doc: 'the CoinGecko WebSocket API (wss://stream.coingecko.com/v1)' }),
  MARKET_API_KEY: secret({ doc: 'CoinGecko API key, sent as x-cg-pro-api-key' }),
  KLINE_MARKET_API_URL: url({ protocols: ['http', 'https'], doc: "CoinGecko REST API base (https://pro-api.coingecko.com/api/v3): the pools' minute candles that fill a gap of the live feed (onchain …/ohlcv/minute)" }),
  MARKET_BACKFILL_SETTLE_MS: int({ default: 5_000, min: 0, doc: "how long after a gap's last minute has closed its minutes are asked from the REST OHLCV" }),
  MARKET_UPSTREAM_INTERVAL: oneOf(['1s', '1m', '15m', '1h', '4h', '1d'] as const satisfies readonly (typeof UPSTREAM_INTERVALS)[number][], {
    default: '1s',
    doc: 'the one candle interval subscribed upstream per pool; every longer stored interval is built from it (1s: all of them)',
  }),
  MARKET_SUBSCRIPTIONS_PER_SOCKET: int({ default: 100, min: 1, doc: "the upstream's subscription limit per socket (CoinGecko: 100 per channel); more pools open more sockets" }),
  MARKET_RECONNECT_INITIAL_MS: int({ default: 500, min: 10, doc: 'first reconnect delay; doubles per failed attempt (with jitter)' }),
  MARKET_RECONNECT_MAX_MS: int({ default: 30_000, min: 10, doc: 'longest wait between reconnects of the upstream socket (the backoff doubles up to it)' }),
  MARKET_PING_MS: int({ default: 10_000, min: 100, doc: 'keep-alive ping; a socket silent for two intervals is dropped and reconnected' }),
  MARKET_POOLS_RESYNC_MS: int({ default: 30_000, min: 100, doc: 'how often the active pools are re-read from Postgres (kline.pools.v1 notices are best-effort)' }),
  MARKET_STATUS_INTERVAL_MS: int({ default: 1000, min: 100, doc: 'how often the status for the debug endpoint is written to Redis' }),
  MARKET_MAX_PENDING_TICKS: int({ default: 200_000, min: 1, doc: 'upstream updates waiting for the broker at most (published in order, each publish tried again until taken): past it updates are dropped and counted, and /readyz fails until the backlog is below it' }),
  MARKET_INGESTER_GROUP: str({ default: 'market-ingester', doc: 'Kafka consumer group reading kline.pools.v1' }),
};
