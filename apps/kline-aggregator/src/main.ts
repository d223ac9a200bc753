import { TOPICS } from '@chainpipe/contracts';
import { addPostgres } from '@chainpipe/db';
import { addKafka } from '@chainpipe/kafka';
import { CandleRepository, LatestCandles, PoolRepository } from '@chainpipe/kline-store';
import { addRedis } from '@chainpipe/redis';
import { runService, systemClock } from '@chainpipe/runtime';
import { klineAggregatorConfig } from './config';
import { secondsRetention } from './retention';
import { createTicksHandler } from './ticks.handler';

runService('kline-aggregator', klineAggregatorConfig, async (svc) => {
  const { config, logger, registry } = svc;
  const db = addPostgres(svc);
  const redis = addRedis(svc);
  const kafka = addKafka(svc);
  const producer = await kafka.producer();
  const candles = new CandleRepository(db, { registry });
  await kafka.consume(TOPICS.marketTicks, {
    groupId: config.KLINE_AGGREGATOR_GROUP,
    maxRecordsPerCall: config.KLINE_AGGREGATOR_MAX_RECORDS_PER_CALL,
    partitionsConcurrently: config.KLINE_AGGREGATOR_PARTITIONS_CONCURRENTLY,
    handler: createTicksHandler({
      candles,
      pools: new PoolRepository(db),
      latest: new LatestCandles(redis),
      publish: (messages) => producer.publish(TOPICS.klineCandles, messages),
      registry,
      clock: systemClock,
      secondsRetention: config.KLINE_1S_RETENTION_HOURS * 3600,
    }),
  });
  svc.serve(secondsRetention({ candles, retentionSeconds: config.KLINE_1S_RETENTION_HOURS * 3600, intervalMs: config.KLINE_RETENTION_INTERVAL_MS, logger }));
});
