import { netQuote } from '@chainpipe/aggregator';
import type { HttpAggChannelQuote } from '@chainpipe/contracts';
import type { ChannelRow } from '@chainpipe/order-store';
import { outAfterCommission } from '@chainpipe/orders';
import type { TokenRow } from '@chainpipe/price';

/** A channel as the quote stream asks it (its stored row; only enabled channels are asked). */
export type QuoteChannel = Omit<ChannelRow, 'enabled'>;

/** A display figure: whole tokens × USD price, two decimals (never used in any computation). */
export function usdFigure(units: bigint, decimals: number, price: number | undefined): string {
  if (price === undefined) return '';
  const whole = Number(units) / 10 ** decimals;
  return (whole * price).toFixed(2);
}

/**
 * One channel's `channel` event from its provider's answer: the net output after the channel fee,
 * the platform fee and any promo (`netQuote`), then after the integrator's commission (the
 * figure an order of that key is checked against), and its USD display figure. Pure.
 */
export function channelQuoteEvent(q: {
  channel: QuoteChannel;
  dst: Pick<TokenRow, 'symbol' | 'decimals'>;
  amountIn: bigint;
  /** What the provider says the destination receives. */
  amountOut: bigint;
  discountPct: number | null;
  /** The commission of the request's integrator key, in the source token's smallest unit. */
  commission: bigint;
  dstUsdPrice: number | undefined;
}): HttpAggChannelQuote {
  const c = q.channel;
  const channelNet = netQuote(q.amountOut, q.amountIn, Number(c.base_fee_pct), q.discountPct);
  const estimatedOut = outAfterCommission(channelNet.estimatedOut, q.amountIn, q.commission);
  return {
    channel_id: c.id,
    name: c.name,
    symbol: q.dst.symbol,
    channel_icon: c.icon_url ?? '',
    estimated_out_str: estimatedOut.toString(),
    estimated_out_usd: usdFigure(estimatedOut, q.dst.decimals, q.dstUsdPrice),
    channel_fee: channelNet.channelFeePct,
    channel_fee_original: Number(c.base_fee_pct),
    promo_applied: q.discountPct !== null,
    discount_pct: q.discountPct,
  };
}
