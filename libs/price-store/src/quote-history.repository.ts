import type { Knex } from 'knex';
import type { CryptoQuoteMessage, FiatRatesMessage } from '@chainpipe/price';

/**
 * `price_usd` is numeric(40, 18): a junk asset quoted past 10^22 would overflow it, and a
 * statement that can never succeed would stall the partition. Such a price stays in `quote`.
 */
const priceColumn = (price: number): number | null => (Math.abs(price) < 1e21 ? price : null);

/** price.quote_history and price.fiat_rate_history: one row per asset (or base) and source timestamp, so a replay inserts nothing. */
export class QuoteHistoryRepository {
  constructor(private readonly db: Knex) {}

  async recordCrypto(messages: readonly CryptoQuoteMessage[]): Promise<void> {
    if (!messages.length) return;
    await this.db('price.quote_history')
      .insert(messages.map((m) => ({ external_id: m.external_id, last_updated: new Date(m.as_of), price_usd: priceColumn(m.usd.price), quote: JSON.stringify(m) })))
      .onConflict(['external_id', 'last_updated'])
      .ignore();
  }

  async recordFiat(messages: readonly FiatRatesMessage[]): Promise<void> {
    if (!messages.length) return;
    await this.db('price.fiat_rate_history')
      .insert(messages.map((m) => ({ base: m.base, as_of: new Date(m.as_of), rates: JSON.stringify(m.rates) })))
      .onConflict(['base', 'as_of'])
      .ignore();
  }
}
