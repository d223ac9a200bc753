import type { Redis } from 'ioredis';
import type { Knex } from '@chainpipe/db';
import { ChannelRepository, type ChannelRow } from '@chainpipe/order-store';
import type { CryptoQuoteMessage, TokenRow } from '@chainpipe/price';
import { QuoteStore, ReferenceRepository, ReferenceSnapshot, type UnlistedTokenReason } from '@chainpipe/price-store';
import { RefreshedValue, type Clock } from '@chainpipe/runtime';

/**
 * How long the stream's reference rows are answered from memory: the channel list is read again
 * behind the requests once a second old and never answers past 5 s (a channel disabled is out of
 * new streams within 5 s); tokens are read again every 30 s and never answer past 2 min, and an
 * unknown token id reloads them at once (at most once a second), so a new token is quoted at
 * once. The destination token's USD price (a display figure of the events) is read from Redis
 * again once a second old and never answers past 3 s.
 */
export const QUOTE_REFERENCE_AGE = {
  channelsRefreshMs: 1_000,
  channelsMaxAgeMs: 5_000,
  tokensRefreshMs: 30_000,
  tokensMaxAgeMs: 120_000,
  tokenMissReloadMs: 1_000,
  usdPriceRefreshMs: 1_000,
  usdPriceMaxAgeMs: 3_000,
} as const;

/** What the quote stream reads besides its channels' providers. */
export interface QuoteReference {
  /** Tokens by id, in order (from memory); `undefined` for an id not among the active tokens. */
  tokensByIds(ids: readonly number[]): Promise<(TokenRow | undefined)[]>;
  /** Why a token id is refused: `chain not found` or `token not found` (read from Postgres). */
  unlistedTokenReason(tokenId: number): Promise<UnlistedTokenReason>;
  /** Every channel, enabled or not (from memory). */
  channels(): Promise<ChannelRow[]>;
  /** The discount of an enabled promo code, null otherwise (read from Postgres). */
  promoDiscountPct(code: string): Promise<number | null>;
  /** The latest USD quote of a token by its external id (from memory). */
  usdPriceOf(externalId: string): Promise<CryptoQuoteMessage | undefined>;
}

/**
 * The quote stream's reference over the price and order stores, with the caches of
 * `QUOTE_REFERENCE_AGE`: tokens and the channel list refreshed behind the requests, and the USD
 * price of each destination token asked for.
 */
export function quoteReferenceFrom(deps: { db: Knex; redis: Redis; clock: Pick<Clock, 'now'> }): QuoteReference {
  const { clock } = deps;
  const reference = new ReferenceRepository(deps.db);
  const storedChannels = new ChannelRepository(deps.db);
  const tokens = new ReferenceSnapshot(reference, {
    refreshMs: QUOTE_REFERENCE_AGE.tokensRefreshMs,
    maxAgeMs: QUOTE_REFERENCE_AGE.tokensMaxAgeMs,
    missReloadMs: QUOTE_REFERENCE_AGE.tokenMissReloadMs,
    clock,
  });
  const channelList = new RefreshedValue({
    load: () => storedChannels.list(),
    refreshMs: QUOTE_REFERENCE_AGE.channelsRefreshMs,
    maxAgeMs: QUOTE_REFERENCE_AGE.channelsMaxAgeMs,
    clock,
  });
  const quoteStore = new QuoteStore(deps.redis);
  // One entry per destination token asked for (known tokens only: an unknown one was refused).
  const usdPrices = new Map<string, RefreshedValue<CryptoQuoteMessage | undefined>>();
  return {
    tokensByIds: (ids) => tokens.tokensByIds(ids),
    unlistedTokenReason: (tokenId) => reference.unlistedTokenReason(tokenId),
    channels: () => channelList.get(),
    promoDiscountPct: (code) => storedChannels.promoDiscountPct(code),
    usdPriceOf: (externalId) => {
      let price = usdPrices.get(externalId);
      if (!price) {
        price = new RefreshedValue({
          load: async () => (await quoteStore.readQuotes([externalId]))[0],
          refreshMs: QUOTE_REFERENCE_AGE.usdPriceRefreshMs,
          maxAgeMs: QUOTE_REFERENCE_AGE.usdPriceMaxAgeMs,
          clock,
        });
        usdPrices.set(externalId, price);
      }
      return price.get();
    },
  };
}
