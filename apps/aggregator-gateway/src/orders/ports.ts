import type { TokenRow } from '@chainpipe/price';

/**
 * What the order endpoints need from the channels (implemented over the channel adapters and
 * the quote math of `@chainpipe/aggregator`): one re-quote of one channel, and the deposit.
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

export interface ChannelDeposit {
  depositAddress: string;
  memo?: string;
  /** The contract a token deposit must go through (THORChain's router for EVM sources). */
  router?: string;
  expireAt: Date;
  providerOrderId: string;
  estimatedOut: bigint;
}

export interface OrderChannels {
  find(channelId: number): Promise<OrderChannel | undefined>;
  requote(channelId: number, req: { src: TokenRow; dst: TokenRow; amountIn: bigint; promoCode?: string; signal: AbortSignal }): Promise<ChannelRequote>;
  createDeposit(
    channelId: number,
    req: { src: TokenRow; dst: TokenRow; amountIn: bigint; dstAddress: string; refundAddress?: string; signal: AbortSignal },
  ): Promise<ChannelDeposit>;
}

/** An upstream call that did not answer in time (502 `quote service timed out`). */
export class ChannelTimeoutError extends Error {}

/** No channel configured: every chosen channel is `channel not found`. */
export const NO_CHANNELS: OrderChannels = {
  find: async () => undefined,
  requote: () => Promise.reject(new Error('no channel is configured')),
  createDeposit: () => Promise.reject(new Error('no channel is configured')),
};
