import { parseDecimal } from '@chainpipe/orders';

/**
 * A decimal amount in whole tokens ("0.1", 1e-8, 12.5) to the smallest unit, rounded down (an
 * amount one receives), or up (a minimum one must send).
 */
export function toUnits(amount: string | number, decimals: number, rounding: 'down' | 'up' = 'down'): bigint {
  const d = parseDecimal(String(amount));
  if (!d || d.negative) throw new RangeError(`not an amount: ${amount}`);
  if (decimals >= d.scale) return d.digits * 10n ** BigInt(decimals - d.scale);
  const unit = 10n ** BigInt(d.scale - decimals);
  return rounding === 'up' ? (d.digits + unit - 1n) / unit : d.digits / unit;
}

/** Smallest unit to a decimal string in whole tokens, exact ("0.1", "12", "0.00000001"). */
export function fromUnits(units: bigint, decimals: number): string {
  const s = units.toString().padStart(decimals + 1, '0');
  const int = s.slice(0, s.length - decimals);
  const frac = s.slice(s.length - decimals).replace(/0+$/, '');
  return frac ? `${int}.${frac}` : int;
}
