import type { ProviderDeposit } from '@chainpipe/aggregator';
import type { TokenRow } from '@chainpipe/price';

/**
 * What the order endpoints need from the channels (implemented over the channel adapters and
 * the quote math of `@chainpipe/aggregator`): one re-quote of one channel, and the deposit (the
 * adapter's own `ProviderDeposit`, as the channel's provider gave it).
 */
export interface OrderChannel {
  id: number;
  kind: string;
  enabled: boolean;
}

export interface ChannelRequote {
  /** Net output after the channel fee, the platform fee and any promo (the quote's estimated_out_str). */
  estimatedOut: bigint;
  /** The platform's base fee of this amount, in the smallest unit of the source token. */
  platformFee: bigint;
  /** Effective channel fee in percent (the quote's channel_fee): the platform rate snapshot. */
  channelFeePct: number;
}

export interface OrderChannels {
  find(channelId: number): Promise<OrderChannel | undefined>;
  requote(channelId: number, req: { src: TokenRow; dst: TokenRow; amountIn: bigint; promoCode?: string; signal: AbortSignal }): Promise<ChannelRequote>;
  createDeposit(
    channelId: number,
    req: { src: TokenRow; dst: TokenRow; amountIn: bigint; dstAddress: string; refundAddress?: string; signal: AbortSignal },
  ): Promise<ProviderDeposit>;
}

/** An upstream call that did not answer in time (502 `quote service timed out`). */
export class ChannelTimeoutError extends Error {}

/** No channel configured: every chosen channel is `channel not found`. */
export const NO_CHANNELS: OrderChannels = {
  find: async () => undefined,
  requote: () => Promise.reject(new Error('no channel is configured')),
  createDeposit: () => Promise.reject(new Error('no channel is configured')),
};
