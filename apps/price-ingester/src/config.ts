import { int, secret, url } from '@chainpipe/runtime';
import { dbConfig } from '@chainpipe/db';
import { kafkaConfig } from '@chainpipe/kafka';

export const priceIngesterConfig = {
  ...kafkaConfig,
  ...dbConfig,
  QUOTES_SOURCE_URL: url({ protocols: ['http', 'https'], doc: 'base URL of the CoinMarketCap-shaped quotes source (https://pro-api.coinmarketcap.com for the real one)' }),
  QUOTES_SOURCE_API_KEY: secret({ doc: 'sent as X-CMC_PRO_API_KEY' }),
  QUOTES_POLL_INTERVAL_MS: int({ default: 60_000, min: 100, doc: 'time between two polls of the quotes source' }),
  QUOTES_BATCH_SIZE: int({ default: 100, min: 1, max: 1000, doc: 'asset ids per quotes request' }),
  FIAT_RATES_SOURCE_URL: url({ protocols: ['http', 'https'], doc: 'base URL of the Open Exchange Rates-shaped fiat source (https://openexchangerates.org)' }),
  FIAT_RATES_APP_ID: secret({ doc: 'the source\'s app_id' }),
  FIAT_RATES_POLL_INTERVAL_MS: int({ default: 300_000, min: 100, doc: 'how often the fiat-rates source is polled' }),
  SOURCE_TIMEOUT_MS: int({ default: 10_000, min: 100, doc: 'deadline of one upstream request' }),
  QUOTE_MAX_AGE_MS: int({ default: 600_000, min: 1_000, doc: 'a source whose newest quote is older than this is stale: /readyz fails' }),
  FIAT_RATES_MAX_AGE_MS: int({ default: 7_200_000, min: 1_000, doc: 'the same for the fiat rates' }),
};
