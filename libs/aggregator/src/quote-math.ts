import { parseDecimal } from '@chainpipe/orders';

/** Percentages are held in millionths of a percent (1 % = 1_000_000): 0.225 % and a 12.5 % promo stay exact. */
const SCALE = 1_000_000n;

function percentUnits(pct: number): bigint {
  const d = parseDecimal(String(pct));
  if (!d || d.negative) throw new RangeError(`not a percentage: ${pct}`);
  return (d.digits * SCALE) / 10n ** BigInt(d.scale);
}

export interface NetQuote {
  /** Output after the provider's fees, the channel fee and any promo (the quote's estimated_out_str). */
  estimatedOut: bigint;
  /** The platform's fee of this amount in the source token's smallest unit (the channel fee after promo). */
  platformFee: bigint;
  /** Effective channel fee in percent, after the promo. */
  channelFeePct: number;
}

/**
 * The platform's channel fee (base percent of the channel, reduced by a promo's discount percent)
 * is taken from the source amount; the provider's output shrinks in proportion. BigInt only.
 */
export function netQuote(providerOut: bigint, amountIn: bigint, baseFeePct: number, promoDiscountPct: number | null): NetQuote {
  const base = percentUnits(baseFeePct);
  const discount = promoDiscountPct === null ? 0n : percentUnits(promoDiscountPct);
  const effective = (base * (100n * SCALE - discount)) / (100n * SCALE);
  const platformFee = (amountIn * effective) / (100n * SCALE);
  const estimatedOut = amountIn > 0n ? (providerOut * (amountIn - platformFee)) / amountIn : 0n;
  return { estimatedOut, platformFee, channelFeePct: Number(effective) / Number(SCALE) };
}
