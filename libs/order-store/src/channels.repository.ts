import type { Knex } from '@chainpipe/db';

/** One row of agg.channels (`base_fee_pct` numeric, as pg sends it: a string). */
export interface ChannelRow {
  id: number;
  name: string;
  icon_url: string | null;
  adapter_kind: string;
  base_fee_pct: string;
  enabled: boolean;
}

/** agg.channels (the swap channels an order or quote may use) and agg.promos (their discounts). */
export class ChannelRepository {
  constructor(private readonly db: Knex) {}

  /** Every channel, enabled or not, by id. */
  list(): Promise<ChannelRow[]> {
    return this.db('agg.channels').orderBy('id').select<ChannelRow[]>('id', 'name', 'icon_url', 'adapter_kind', 'base_fee_pct', 'enabled');
  }

  find(id: number): Promise<Pick<ChannelRow, 'id' | 'adapter_kind' | 'base_fee_pct' | 'enabled'> | undefined> {
    return this.db('agg.channels').where({ id }).first('id', 'adapter_kind', 'base_fee_pct', 'enabled');
  }

  /** The discount in percent of an enabled promo code; null when the code is unknown or switched off. */
  async promoDiscountPct(code: string): Promise<number | null> {
    const promo: { discount_pct: string } | undefined = await this.db('agg.promos').where({ code, enabled: true }).first('discount_pct');
    return promo ? Number(promo.discount_pct) : null;
  }
}
