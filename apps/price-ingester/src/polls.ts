import { Counter, type Registry } from 'prom-client';
import { TOPICS } from '@chainpipe/contracts';
import type { TopicProducer } from '@chainpipe/kafka';
import { parseCmcQuotes, parseFiatRates, quoteKey, type PriceQuoteMessage } from '@chainpipe/price';
import { RetryableError, type Clock, type Logger } from '@chainpipe/runtime';
import type { PollOutcome } from './poller';
import { fiatRatesUrl, getJson, quotesUrl } from './sources';

export interface PollDeps {
  producer: Pick<TopicProducer, 'publish'>;
  logger: Logger;
  registry: Registry;
  clock: Pick<Clock, 'now'>;
  timeoutMs: number;
}

function counters(registry: Registry) {
  return {
    published: new Counter({ name: 'chainpipe_price_quotes_published_total', help: 'Quotes published to price.quotes.v1 by kind', labelNames: ['kind'], registers: [registry] }),
    unchanged: new Counter({ name: 'chainpipe_price_quotes_unchanged_total', help: 'Quotes not published again because the source timestamp did not move', labelNames: ['kind'], registers: [registry] }),
    rejected: new Counter({ name: 'chainpipe_price_quotes_rejected_total', help: 'Upstream entries skipped as unreadable', labelNames: ['source'], registers: [registry] }),
  };
}

/**
 * The two polls of the ingester. Each publishes what the source answered (acks=all) before the
 * poll counts as done; an entry whose source timestamp has not moved since its last publish is
 * not sent again (the writer would ignore it anyway).
 */
export function createPolls(deps: PollDeps, cfg: {
  quotesUrl: string;
  quotesApiKey: string;
  batchSize: number;
  fiatUrl: string;
  fiatAppId: string;
  /** The asset ids to quote and the fiat codes to rate: read from the reference tables each poll. */
  externalIds: () => Promise<string[]>;
  fiatCodes: () => Promise<string[]>;
}) {
  const metrics = counters(deps.registry);
  const lastPublished = new Map<string, number>();

  const publishFresh = async (messages: PriceQuoteMessage[]): Promise<void> => {
    const fresh = messages.filter((m) => lastPublished.get(quoteKey(m)) !== m.as_of);
    for (const m of messages) if (!fresh.includes(m)) metrics.unchanged.inc({ kind: m.kind });
    if (!fresh.length) return;
    await deps.producer.publish(TOPICS.priceQuotes, fresh.map((value) => ({ value })));
    for (const m of fresh) {
      lastPublished.set(quoteKey(m), m.as_of);
      metrics.published.inc({ kind: m.kind });
    }
  };

  const newest = (ms: PriceQuoteMessage[]): number | null => (ms.length ? Math.max(...ms.map((m) => m.as_of)) : null);

  return {
    async quotes(): Promise<PollOutcome> {
      const ids = [...new Set(await cfg.externalIds())];
      const all: PriceQuoteMessage[] = [];
      for (let i = 0; i < ids.length; i += cfg.batchSize) {
        const chunk = ids.slice(i, i + cfg.batchSize);
        const headers: Record<string, string> = cfg.quotesApiKey ? { 'X-CMC_PRO_API_KEY': cfg.quotesApiKey } : {};
        const body = await getJson(quotesUrl(cfg.quotesUrl, chunk), { timeoutMs: deps.timeoutMs, headers });
        const parsed = parseCmcQuotes(body, deps.clock.now());
        for (const r of parsed.rejected) {
          metrics.rejected.inc({ source: 'quotes' });
          deps.logger.warn({ msg: 'quote_rejected', id: r.id, reason: r.reason });
        }
        await publishFresh(parsed.items);
        all.push(...parsed.items);
      }
      return { newestAsOf: newest(all) };
    },

    async fiatRates(): Promise<PollOutcome> {
      const codes = await cfg.fiatCodes();
      if (!codes.length) return { newestAsOf: null };
      const body = await getJson(fiatRatesUrl(cfg.fiatUrl, codes, cfg.fiatAppId), { timeoutMs: deps.timeoutMs });
      const parsed = parseFiatRates(body, deps.clock.now());
      if ('error' in parsed) {
        metrics.rejected.inc({ source: 'fiat_rates' });
        throw new RetryableError(`fiat rates unreadable: ${parsed.error}`, 'UPSTREAM_UNREADABLE');
      }
      await publishFresh([parsed]);
      return { newestAsOf: parsed.as_of };
    },
  };
}
