import { addPostgres } from '@chainpipe/db';
import { addKafka } from '@chainpipe/kafka';
import { ReferenceRepository } from '@chainpipe/price-store';
import { runService, systemClock } from '@chainpipe/runtime';
import { priceIngesterConfig } from './config';
import { SourcePoller, registerStalenessMetrics } from './poller';
import { createPolls } from './polls';

runService('price-ingester', priceIngesterConfig, async (svc) => {
  const { config, logger, registry } = svc;
  const db = addPostgres(svc, { poolMax: 2 });
  const kafka = addKafka(svc);
  const producer = await kafka.producer();
  const reference = new ReferenceRepository(db);
  const polls = createPolls(
    { producer, logger, registry, clock: systemClock, timeoutMs: config.SOURCE_TIMEOUT_MS },
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
    new SourcePoller({ source: 'quotes', intervalMs: config.QUOTES_POLL_INTERVAL_MS, maxAgeMs: config.QUOTE_MAX_AGE_MS, poll: polls.quotes, logger, registry }),
    new SourcePoller({ source: 'fiat_rates', intervalMs: config.FIAT_RATES_POLL_INTERVAL_MS, maxAgeMs: config.FIAT_RATES_MAX_AGE_MS, poll: polls.fiatRates, logger, registry }),
  ];
  registerStalenessMetrics(registry, pollers);
  // Entry points: they poll once the app is wired and stop before the producer and the pool close.
  for (const p of pollers) svc.serve({ name: `source-${p.source}`, ready: () => p.ready(), health: () => p.health(), start: async () => p.start(), stop: () => p.stop() });
});
