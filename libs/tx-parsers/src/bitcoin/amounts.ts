/** Bitcoin amount conversions to satoshi, exact (BigInt), never through float arithmetic. */

const SATS_PER_BTC = 100_000_000n;
/** 21 million BTC: no single amount can exceed it (consensus MAX_MONEY). */
const MAX_MONEY_BTC = 21_000_000;
const MAX_MONEY_SATS = BigInt(MAX_MONEY_BTC) * SATS_PER_BTC;

const DECIMAL_BTC = /^(\d{1,8})(?:\.(\d{1,8}))?$/;

/**
 * Bitcoin Core prints amounts as JSON numbers in BTC with at most 8 decimals, and JSON.parse has
 * already turned them into doubles. Why `toFixed(8)` recovers the exact decimal:
 * - JSON.parse yields the double nearest to the printed decimal d;
 * - for 0 <= d <= 21e6 < 2^25 the spacing of doubles is at most 2^-28, so |double - d| <= 2^-29
 *   ≈ 1.9e-9, which is less than half of the 1e-8 step of 8-decimal values;
 * - `Number.prototype.toFixed(8)` rounds the double's exact binary value (not another float
 *   computation) to the nearest 8-decimal string, hence returns exactly d.
 * Multiplying by 1e8 instead would introduce a second rounding (0.29 * 1e8 = 28999999.999999996).
 * A value with more than 8 decimals fails the round-trip check and is rejected rather than
 * silently rounded; so are negatives, non-finite values and anything above 21e6 BTC.
 * Decimal strings ("50.00000000", as some proxies send) are converted digit by digit.
 */
export function btcToSats(value: unknown): bigint | null {
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || value < 0 || value > MAX_MONEY_BTC) return null;
    const text = value.toFixed(8);
    if (Number(text) !== value) return null;
    return BigInt(text.replace('.', ''));
  }
  if (typeof value === 'string') {
    const m = DECIMAL_BTC.exec(value);
    if (!m) return null;
    const sats = BigInt(m[1]) * SATS_PER_BTC + BigInt((m[2] ?? '').padEnd(8, '0'));
    return sats <= MAX_MONEY_SATS ? sats : null;
  }
  return null;
}

/**
 * Blockbook sends amounts as decimal strings of satoshi. Blockbook serves other coins too (no
 * MAX_MONEY cap here); the length bound only keeps BigInt work small on garbage input.
 */
export function satsFromString(value: unknown): bigint | null {
  if (typeof value === 'string') return /^\d{1,30}$/.test(value) ? BigInt(value) : null;
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return BigInt(value);
  return null;
}
