import { Counter, Gauge, type Registry } from 'prom-client';
import type { BatchHandler } from '@chainpipe/kafka';
import type { CryptoQuoteMessage, FiatRatesMessage, PriceQuoteMessage } from '@chainpipe/price';
import type { QuoteHistoryRepository, QuoteStore } from '@chainpipe/price-store';
import type { Clock } from '@chainpipe/runtime';

export interface QuotesHandlerDeps {
  history: Pick<QuoteHistoryRepository, 'recordCrypto' | 'recordFiat'>;
  store: Pick<QuoteStore, 'writeLatest'>;
  registry: Registry;
  clock: Pick<Clock, 'now'>;
}

/**
 * price.quotes.v1 → history in Postgres (one row per asset and source timestamp, so a replay
 * inserts nothing) → latest in Redis (only if newer). Both writes are idempotent; the consumer
 * commits the offsets after this resolves.
 */
export function quotesHandler(deps: QuotesHandlerDeps): BatchHandler<PriceQuoteMessage> {
  const written = new Counter({ name: 'chainpipe_price_latest_writes_total', help: 'Latest-quote writes by kind and outcome (newer: stored; older: a newer one was already there)', labelNames: ['kind', 'outcome'], registers: [deps.registry] });
  let newestCrypto: number | null = null;
  new Gauge({
    name: 'chainpipe_price_newest_quote_age_seconds',
    help: 'Age of the newest crypto quote this writer stored, by its source timestamp; grows while the pipeline is stale',
    registers: [deps.registry],
    collect() {
      if (newestCrypto !== null) this.set(Math.max(0, deps.clock.now() - newestCrypto) / 1000);
    },
  });

  return async (records) => {
    const messages = records.map((r) => r.value);
    const crypto = messages.filter((m): m is CryptoQuoteMessage => m.kind === 'crypto');
    const fiat = messages.filter((m): m is FiatRatesMessage => m.kind === 'fiat');
    await deps.history.recordCrypto(crypto);
    await deps.history.recordFiat(fiat);
    const landed = await deps.store.writeLatest(messages);
    messages.forEach((m, i) => written.inc({ kind: m.kind, outcome: landed[i] ? 'newer' : 'older' }));
    for (const m of crypto) newestCrypto = Math.max(newestCrypto ?? 0, m.as_of);
  };
}
