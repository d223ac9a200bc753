/**
 * Quotes arrive as JSON numbers (the quotes source's format) and leave as decimal strings or
 * numbers. A string must never be in exponent form (`1e-7`): clients parse these as decimals.
 */

/** 15 significant digits: all a double carries reliably, so no `0.30000000000000004`. */
const SIGNIFICANT = 15;

export function decimalString(n: number | null | undefined): string | null {
  if (n === null || n === undefined || !Number.isFinite(n)) return null;
  if (n === 0) return '0';
  const s = n.toPrecision(SIGNIFICANT);
  return plain(s);
}

/** Expands exponent notation and drops trailing zeros of the fraction. */
function plain(s: string): string {
  let out = s;
  const m = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(s);
  if (m) {
    const [, sign, head, tail = '', expText] = m;
    const digits = head + tail;
    const exp = Number(expText);
    if (exp < 0) out = `${sign}0.${'0'.repeat(-exp - 1)}${digits}`;
    else if (digits.length <= exp + 1) out = `${sign}${digits}${'0'.repeat(exp + 1 - digits.length)}`;
    else out = `${sign}${digits.slice(0, exp + 1)}.${digits.slice(exp + 1)}`;
  }
  if (out.includes('.')) out = out.replace(/0+$/, '').replace(/\.$/, '');
  return out;
}

/** A rate with exactly 8 decimal places (spec, fiat rate item). */
export function rateString(n: number): string {
  return n.toFixed(8);
}

/** Rounds to 15 significant digits as a number (JSON number fields). */
export function roundNumber(n: number | null | undefined): number | null {
  if (n === null || n === undefined || !Number.isFinite(n)) return null;
  return Number(n.toPrecision(SIGNIFICANT));
}
