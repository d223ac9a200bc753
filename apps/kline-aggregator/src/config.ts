import { dbConfig } from '@chainpipe/db';
import { kafkaConfig } from '@chainpipe/kafka';
import { redisConfig } from '@chainpipe/redis';
import { int, str } from '@chainpipe/runtime';

export const klineAggregatorConfig = {
  ...kafkaConfig,
  ...dbConfig,
  ...redisConfig,
  KLINE_AGGREGATOR_GROUP: str({ default: 'kline-aggregator', doc: 'Kafka consumer group reading market.ticks.v1' }),
  KLINE_AGGREGATOR_MAX_RECORDS_PER_CALL: int({ default: 20_000, min: 1, max: 50_000, doc: 'ticks per handler call at most (a call takes what was fetched): stored in one transaction, their candles published, then the offsets committed; a backlog folds into fewer writes per tick the more of it one call takes' }),
  KLINE_AGGREGATOR_PARTITIONS_CONCURRENTLY: int({ default: 3, min: 1, max: 64, doc: 'market.ticks.v1 partitions handled at the same time (ticks are keyed by pool, so calls of different partitions write different candles): Postgres, Redis and Kafka waits of one call overlap the work of another' }),
  KLINE_1S_RETENTION_HOURS: int({ default: 24, min: 1, doc: 'how long 1s candles are kept (longer intervals are kept for ever)' }),
  KLINE_RETENTION_INTERVAL_MS: int({ default: 60_000, min: 1000, doc: 'how often expired 1s candles are deleted' }),
};
