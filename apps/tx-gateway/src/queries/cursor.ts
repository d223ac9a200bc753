import type { Normalized } from './normalized';

/**
 * Keyset cursor of the history queries. The cursor is the internal transaction id (a bigint,
 * increasing in storage order): a page holds the transactions with an id below the cursor,
 * newest (highest id) first, and the next cursor is the id of the page's last record. No
 * OFFSET anywhere, so page 1000 costs what page 1 costs.
 */

/** Largest bigint: ids past it cannot exist, and Postgres would reject the comparison. */
const MAX_ID = 9223372036854775807n;

/**
 * The request's `id` as a decimal string, or null for "from the newest". Absent, null, "" and 0
 * all mean the first page (clients often start from 0). Integers or decimal strings.
 */
export function parseCursor(v: unknown): Normalized<string | null> {
  if (v === undefined || v === null) return { ok: true, value: null };
  let digits: string;
  if (typeof v === 'number') {
    if (!Number.isSafeInteger(v) || v < 0) return { ok: false, error: 'id must be a non-negative integer' };
    digits = String(v);
  } else if (typeof v === 'string' && /^\s*[0-9]{0,19}\s*$/.test(v)) {
    digits = v.trim();
    if (digits === '') return { ok: true, value: null };
  } else {
    return { ok: false, error: 'id must be a non-negative integer' };
  }
  const n = BigInt(digits);
  if (n > MAX_ID) return { ok: false, error: 'id is out of range' };
  return { ok: true, value: n === 0n ? null : n.toString() };
}

