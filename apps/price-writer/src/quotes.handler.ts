import { Counter, Gauge, type Registry } from 'prom-client';
import type { Knex } from '@chainpipe/db';
import type { BatchHandler } from '@chainpipe/kafka';
import type { CryptoQuoteMessage, FiatRatesMessage, PriceQuoteMessage } from '@chainpipe/price';
import type { QuoteStore } from '@chainpipe/price-store';
import type { Clock } from '@chainpipe/runtime';

/**
 * `price_usd` is numeric(40, 18): a junk asset quoted past 10^22 would overflow it, and a
 * statement that can never succeed would stall the partition. Such a price stays in `quote`.
 */
const priceColumn = (price: number): number | null => (Math.abs(price) < 1e21 ? price : null);

export interface QuotesHandlerDeps {
  db: Knex;
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
    if (crypto.length) {
      await deps.db('price.quote_history')
        .insert(crypto.map((m) => ({ external_id: m.external_id, last_updated: new Date(m.as_of), price_usd: priceColumn(m.usd.price), quote: JSON.stringify(m) })))
        .onConflict(['external_id', 'last_updated'])
        .ignore();
    }
    if (fiat.length) {
      await deps.db('price.fiat_rate_history')
        .insert(fiat.map((m) => ({ base: m.base, as_of: new Date(m.as_of), rates: JSON.stringify(m.rates) })))
        .onConflict(['base', 'as_of'])
        .ignore();
    }
    const landed = await deps.store.writeLatest(messages);
    messages.forEach((m, i) => written.inc({ kind: m.kind, outcome: landed[i] ? 'newer' : 'older' }));
    for (const m of crypto) newestCrypto = Math.max(newestCrypto ?? 0, m.as_of);
  };
}
