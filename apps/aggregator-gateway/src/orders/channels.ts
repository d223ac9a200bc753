import { tokenRefOf, type ChannelAdapter, type TokenRef } from '@chainpipe/aggregator';
import { netQuote } from '@chainpipe/aggregator';
import type { Knex } from '@chainpipe/db';
import { ChannelRepository, type ChannelRow as StoredChannel } from '@chainpipe/order-store';
import type { TokenRow } from '@chainpipe/price';
import type { OrderChannels } from './ports';

const tokenRef = (t: TokenRow): TokenRef => tokenRefOf(t);

type ChannelRow = Pick<StoredChannel, 'id' | 'adapter_kind' | 'base_fee_pct' | 'enabled'>;

/** The order endpoints' channels: rows of agg.channels, each served by the adapter of its kind. */
export function orderChannelsFrom(db: Knex, adapters: readonly ChannelAdapter[]): OrderChannels {
  const byKind = new Map(adapters.map((a) => [a.kind, a]));
  const stored = new ChannelRepository(db);
  const row = (id: number): Promise<ChannelRow | undefined> => stored.find(id);
  const adapterOf = async (id: number): Promise<{ channel: ChannelRow; adapter: ChannelAdapter }> => {
    const channel = await row(id);
    const adapter = channel && byKind.get(channel.adapter_kind);
    if (!channel || !adapter) throw new Error(`channel ${id} has no adapter`);
    return { channel, adapter };
  };
  return {
    find: async (id) => {
      const channel = await row(id);
      if (!channel) return undefined;
      return { id: channel.id, kind: channel.adapter_kind, enabled: channel.enabled && byKind.has(channel.adapter_kind) };
    },
    requote: async (id, req) => {
      const { channel, adapter } = await adapterOf(id);
      const discountPct = req.promoCode ? await stored.promoDiscountPct(req.promoCode) : null;
      const quote = await adapter.quote({ src: tokenRef(req.src), dst: tokenRef(req.dst), amountIn: req.amountIn, signal: req.signal });
      return netQuote(quote.amountOut, req.amountIn, Number(channel.base_fee_pct), discountPct);
    },
    createDeposit: async (id, req) => {
      const { adapter } = await adapterOf(id);
      return adapter.createDeposit({ src: tokenRef(req.src), dst: tokenRef(req.dst), amountIn: req.amountIn, dstAddress: req.dstAddress, refundAddress: req.refundAddress, signal: req.signal });
    },
  };
}
