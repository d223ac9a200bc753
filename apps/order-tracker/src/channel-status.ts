import type { ChannelOutcome } from '@chainpipe/orders';
import type { ChannelStatusSource } from './tracker';

/** The `status` operation of a channel adapter (`@chainpipe/aggregator`'s `ChannelAdapter`). */
export interface StatusAdapter {
  readonly kind: string;
  status(providerOrderId: string, signal?: AbortSignal, ctx?: { depositTxHash?: string | null }): Promise<{ outcome: 'pending' | ChannelOutcome; txHash?: string }>;
}

/**
 * The transaction that paid the channel, by which THORChain follows a swap: the platform's
 * forward for an order paid to its own deposit address (none yet: nothing to follow), the
 * user's deposit for an order from before deposit indexes (paid to the channel directly).
 */
export function paymentToChannel(order: { deposit_index: number | null; deposit_tx_hash: string | null; forward_tx_hash: string | null }): string | null {
  return order.deposit_index === null ? order.deposit_tx_hash : order.forward_tx_hash;
}

/**
 * The tracker's view of the channels: an order's status from the adapter of its channel kind.
 * An order of a kind no adapter serves fails its status call (counted and logged each sweep)
 * and stays where it is.
 */
export function channelStatusFromAdapters(adapters: readonly StatusAdapter[]): ChannelStatusSource {
  const byKind = new Map(adapters.map((a) => [a.kind, a]));
  return {
    status: (order, signal) => {
      const adapter = byKind.get(order.channel_kind);
      if (!adapter) return Promise.reject(new Error(`no channel adapter of kind ${order.channel_kind} is configured`));
      return adapter.status(order.provider_order_id, signal, { depositTxHash: paymentToChannel(order) });
    },
  };
}
