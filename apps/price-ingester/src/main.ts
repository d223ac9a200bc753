import { loadContracts } from '@chainpipe/contracts';
import { createDb, dbComponent } from '@chainpipe/db';
import { TopicProducer, createKafka } from '@chainpipe/kafka';
import { ReferenceRepository } from '@chainpipe/price';
import { bootApp, runMain } from '@chainpipe/runtime';
import { priceIngesterConfig } from './config';
import { SourcePoller, registerStalenessMetrics } from './poller';
import { createPolls } from './polls';

runMain(async () => {
  const { config, logger, registry, lifecycle } = bootApp('price-ingester', priceIngesterConfig);
  const contracts = loadContracts();

  const db = createDb({ url: config.DATABASE_URL, poolMax: 2, applicationName: 'price-ingester' });
  lifecycle.add(dbComponent(db));
  const kafka = createKafka({ brokers: config.KAFKA_BROKERS, clientId: `${config.KAFKA_CLIENT_ID}-price-ingester`, logger });
  const producer = new TopicProducer({ kafka, contracts, logger, registry, topicPrefix: config.KAFKA_TOPIC_PREFIX, publishTimeoutMs: config.KAFKA_PUBLISH_TIMEOUT_MS });
  await producer.connect();
  lifecycle.add({ name: 'kafka-producer', health: () => producer.health(), stop: () => producer.disconnect() });

  const reference = new ReferenceRepository(db);
  const polls = createPolls(
    { producer, logger, registry, now: Date.now, timeoutMs: config.SOURCE_TIMEOUT_MS },
    {
      quotesUrl: config.QUOTES_SOURCE_URL,
      quotesApiKey: config.QUOTES_SOURCE_API_KEY,
      batchSize: config.QUOTES_BATCH_SIZE,
      fiatUrl: config.FIAT_RATES_SOURCE_URL,
      fiatAppId: config.FIAT_RATES_APP_ID,
      externalIds: async () => (await reference.allQuotedTokens()).map((t) => t.external_id!),
      fiatCodes: async () => (await reference.listFiats()).map((f) => f.code),
    },
  );
  const pollers = [
    new SourcePoller({ source: 'quotes', intervalMs: config.QUOTES_POLL_INTERVAL_MS, maxAgeMs: config.QUOTE_MAX_AGE_MS, poll: polls.quotes, logger, registry, now: Date.now }),
    new SourcePoller({ source: 'fiat_rates', intervalMs: config.FIAT_RATES_POLL_INTERVAL_MS, maxAgeMs: config.FIAT_RATES_MAX_AGE_MS, poll: polls.fiatRates, logger, registry, now: Date.now }),
  ];
  registerStalenessMetrics(registry, pollers);
  for (const p of pollers) {
    lifecycle.add({ name: `source-${p.source}`, ready: () => p.ready(), health: () => p.health(), stop: () => p.stop() });
    p.start();
  }

  const ops = await lifecycle.serveOps({ host: config.OPS_HOST, port: config.OPS_PORT, registry });
  lifecycle.markStarted();
  logger.info({ msg: 'started', opsPort: ops.port });
});
