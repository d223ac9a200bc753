/**
 * The one freshness rule of every value the price API serves (a token's quote, the fiat rates a
 * conversion or a rate list uses): served only while its source time (`as_of`, the upstream's own
 * timestamp) is at most its kind's maximum age old. Every served value carries that time
 * (`last_updated`); a value past its age is never served as current (docs/decisions.md D188).
 */

/** The maximum ages, one per kind of served value (configuration). */
export interface FreshnessLimits {
  /** A token's quote (`QUOTE_MAX_AGE_MS`). */
  quoteMaxAgeMs: number;
  /** The fiat rates (`FIAT_RATES_MAX_AGE_MS`). */
  fiatRatesMaxAgeMs: number;
}

/** Whether a value whose source time is `asOfMs` may be served at `nowMs` under `maxAgeMs`. */
export function isFresh(asOfMs: number, nowMs: number, maxAgeMs: number): boolean {
  return nowMs - asOfMs <= maxAgeMs;
}

/** `value` if it is fresh at `nowMs`, else undefined: what a route serves. */
export function freshOrNone<T extends { as_of: number }>(value: T | undefined, nowMs: number, maxAgeMs: number): T | undefined {
  return value !== undefined && isFresh(value.as_of, nowMs, maxAgeMs) ? value : undefined;
}
