/** Query parameter rules of `GET /tokens` (docs/decisions.md#d8): integers from 1, `limit` clamped to 1000. */
export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 1000;

export type ParamResult = { ok: true; value: number } | { ok: false; error: string };

/** A positive integer query parameter; `fallback` when absent or empty; clamped to `max`. */
export function positiveIntParam(name: string, raw: unknown, fallback: number, max?: number): ParamResult {
  if (raw === undefined || raw === '') return { ok: true, value: fallback };
  if (typeof raw !== 'string' || !/^\s*\d+\s*$/.test(raw)) return { ok: false, error: `${name} must be an integer >= 1` };
  const n = Number(raw.trim());
  if (!Number.isSafeInteger(n) || n < 1) return { ok: false, error: `${name} must be an integer >= 1` };
  return { ok: true, value: max !== undefined ? Math.min(n, max) : n };
}
