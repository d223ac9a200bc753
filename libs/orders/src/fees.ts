/**
 * Integrator commission math, integers only. Key rates are held in basis points (1 bp = 0.01 %),
 * the key `fee_rate` range of the spec being 0.01 %–10.00 % = 1–1000 bp.
 *
 * The reading of the spec used here (docs/decisions.md#d23): the user pays the channel's
 * base fee **plus** the key's commission rate. So the total fee of an order before the
 * commission is deducted (`fee_platform_original`) is the base fee plus the commission, and the
 * platform's part after deducting the commission (`fee_platform`) is the base fee:
 * `fee_platform_original = fee_platform + fee_integrator`. Without a key the commission is 0
 * and both equal the base fee.
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

/** Basis points back to the percent string an operator typed ("0.25" = 0.25 %). */
export function feeRateString(bp: number): string {
  return `${Math.floor(bp / 100)}.${String(bp % 100).padStart(2, '0')}`;
}

/** Basis points as the order's rate snapshot: a decimal fraction with 4 places ("0.0100" = 1 %). */
export function rateSnapshot(bp: number): string {
  return `${Math.floor(bp / 10000)}.${String(bp % 10000).padStart(4, '0')}`;
}

/**
 * A percentage (the quote's `channel_fee`, e.g. 0.3 or 0.225) as a rate snapshot: the decimal
 * fraction, at least 4 places ("0.0030", "0.00225"). Works on the number's shortest decimal
 * text, so no binary rounding enters the string.
 */
export function percentToRateSnapshot(percent: number): string {
  const d = parseDecimal(String(percent));
  if (!d || d.negative) throw new RangeError(`not a percentage: ${percent}`);
  const scale = d.scale + 2;
  const digits = d.digits.toString().padStart(scale + 1, '0');
  const int = digits.slice(0, digits.length - scale);
  let frac = digits.slice(digits.length - scale).replace(/0+$/, '');
  if (frac.length < 4) frac = frac.padEnd(4, '0');
  return `${int}.${frac}`;
}

export interface FeeSnapshot {
  fee_platform: string;
  fee_partner: string;
  fee_integrator: string;
  fee_platform_original: string;
}

/** The commission of an order: `amount × rate` rounded down; none without a key. */
export function commissionOf(amount: bigint, integratorRateBp: number | null): bigint {
  return integratorRateBp === null ? 0n : (amount * BigInt(integratorRateBp)) / 10000n;
}

/**
 * Fee snapshots of an order: `baseFee` is the channel's platform fee of the order (smallest unit
 * of the source token, as the quote math computed it); the commission comes on top of it.
 */
export function splitFees(amount: bigint, baseFee: bigint, integratorRateBp: number | null): FeeSnapshot {
  const commission = commissionOf(amount, integratorRateBp);
  return {
    fee_platform: baseFee.toString(),
    fee_partner: '0',
    fee_integrator: commission.toString(),
    fee_platform_original: (baseFee + commission).toString(),
  };
}

/**
 * The channel's estimated output once the commission is also paid: the commission leaves the
 * source amount before the swap, so the output shrinks in the same proportion (rounded down).
 */
export function outAfterCommission(estimatedOut: bigint, amount: bigint, commission: bigint): bigint {
  if (amount <= 0n || commission <= 0n) return estimatedOut;
  if (commission >= amount) return 0n;
  return (estimatedOut * (amount - commission)) / amount;
}

// --- decimals without floats ------------------------------------------------------------------

export interface Decimal {
  negative: boolean;
  /** The value is digits / 10^scale. */
  digits: bigint;
  scale: number;
}

/** Parses a decimal text as JSON numbers print it (`0.01`, `1e-7`, `2.5E+3`); undefined otherwise. */
export function parseDecimal(text: string): Decimal | undefined {
  const m = /^(-)?(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(text.trim());
  if (!m) return undefined;
  const frac = m[3] ?? '';
  const exp = m[4] ? Number(m[4]) : 0;
  if (!Number.isSafeInteger(exp) || Math.abs(exp) > 400) return undefined;
  let digits = BigInt(m[2] + frac);
  let scale = frac.length - exp;
  if (scale < 0) {
    digits *= 10n ** BigInt(-scale);
    scale = 0;
  }
  return { negative: m[1] === '-', digits, scale };
}

/**
 * `amount × (1 − slippage)` rounded down, with the slippage read from its decimal text: the
 * spec's "usually main_channel_estimated_out_amount times (1 - slippage), floored".
 */
export function minOutForSlippage(amount: bigint, slippage: number): bigint {
  const d = parseDecimal(String(slippage));
  if (!d || d.negative) throw new RangeError(`not a slippage: ${slippage}`);
  const one = 10n ** BigInt(d.scale);
  if (d.digits >= one) return 0n;
  return (amount * (one - d.digits)) / one;
}

/** Whether `actual` differs from `expected` by more than `thresholdBp` basis points of `expected`. */
export function deviatesBeyond(expected: bigint, actual: bigint, thresholdBp: number): boolean {
  const diff = actual > expected ? actual - expected : expected - actual;
  return diff * 10000n > expected * BigInt(thresholdBp);
}
