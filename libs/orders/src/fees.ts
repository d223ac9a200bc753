/**
 * Integrator commission math, integers only. Rates are held in basis points (1 bp = 0.01 %),
 * the key `fee_rate` range of the spec being 0.01 %–10.00 % = 1–1000 bp.
 */
export const MIN_FEE_RATE_BP = 1;
export const MAX_FEE_RATE_BP = 1000;

/** Parses a percent string such as "0.25" (= 0.25 %) into basis points; null when not a valid rate. */
export function parseFeeRatePercent(text: string): number | null {
  const m = /^(\d{1,2})(?:\.(\d{1,2}))?$/.exec(text.trim());
  if (!m) return null;
  const bp = Number(m[1]) * 100 + Number((m[2] ?? '').padEnd(2, '0'));
  return bp >= MIN_FEE_RATE_BP && bp <= MAX_FEE_RATE_BP ? bp : null;
}

/** Basis points back to the percent string stored as the rate snapshot ("0.25"). */
export function feeRateString(bp: number): string {
  return `${Math.floor(bp / 100)}.${String(bp % 100).padStart(2, '0')}`;
}

export interface FeeSnapshot {
  fee_platform: string;
  fee_partner: string;
  fee_integrator: string;
  fee_platform_original: string;
}

/**
 * Splits the channel's platform fee of an order: the integrator earns `amount × rate` (rounded
 * down), taken out of the platform fee and never more than it. No key → no commission.
 */
export function splitFees(amount: bigint, platformFeeOriginal: bigint, integratorRateBp: number | null): FeeSnapshot {
  const wanted = integratorRateBp === null ? 0n : (amount * BigInt(integratorRateBp)) / 10000n;
  const integrator = wanted > platformFeeOriginal ? platformFeeOriginal : wanted;
  return {
    fee_platform: (platformFeeOriginal - integrator).toString(),
    fee_partner: '0',
    fee_integrator: integrator.toString(),
    fee_platform_original: platformFeeOriginal.toString(),
  };
}
