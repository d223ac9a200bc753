import { int, str } from '@chainpipe/runtime';
import { dbConfig } from '@chainpipe/db';
import { kafkaConfig } from '@chainpipe/kafka';
import { redisConfig } from '@chainpipe/redis';

export const priceWriterConfig = {
  ...kafkaConfig,
  ...dbConfig,
  ...redisConfig,
  PRICE_WRITER_GROUP: str({ default: 'price-writer', doc: 'consumer group of price.quotes.v1' }),
  PRICE_WRITER_MAX_RECORDS_PER_CALL: int({ default: 500, min: 1, max: 10_000, doc: 'quotes per handler call (stored, then committed)' }),
};
