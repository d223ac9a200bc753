import { TOPICS } from '@chainpipe/contracts';
import { addPostgres } from '@chainpipe/db';
import { addKafka } from '@chainpipe/kafka';
import { QuoteHistoryRepository, QuoteStore } from '@chainpipe/price-store';
import { addRedis } from '@chainpipe/redis';
import { runService, systemClock } from '@chainpipe/runtime';
import { priceWriterConfig } from './config';
import { quotesHandler } from './quotes.handler';

runService('price-writer', priceWriterConfig, async (svc) => {
  const { config, registry } = svc;
  const db = addPostgres(svc);
  const redis = addRedis(svc);
  const kafka = addKafka(svc);
  await kafka.consume(TOPICS.priceQuotes, {
    groupId: config.PRICE_WRITER_GROUP,
    maxRecordsPerCall: config.PRICE_WRITER_MAX_RECORDS_PER_CALL,
    handler: quotesHandler({ history: new QuoteHistoryRepository(db), store: new QuoteStore(redis), registry, clock: systemClock }),
  });
});
