import type { TokenBalances } from './accounts';
import { type JsonObject, asArray, toBigInt } from './json';
import type { NativeMove } from './movements';

export interface NativeSummary {
  from: string | null;
  to: string | null;
  lamports: bigint;
}

/**
 * The record's top-level SOL movement from System instructions: the largest non-zero top-level
 * (depth 1) transfer — inner ones only when no top-level one exists (so a wallet transfer is not
 * hidden behind the rent an ATA creation pays) — ties broken by execution order. Its amount is
 * the sum of all candidates between the same source and destination, so a transfer split into
 * several instructions is reported whole. Null when no non-zero movement exists.
 */
export function summarizeNativeMoves(moves: readonly NativeMove[]): NativeSummary | null {
  const nonZero = moves.filter((m) => m.lamports > 0n);
  const top = nonZero.filter((m) => m.depth === 1);
  const candidates = top.length > 0 ? top : nonZero;
  let pick: NativeMove | null = null;
  for (const m of candidates) if (pick === null || m.lamports > pick.lamports) pick = m;
  if (!pick) return null;
  const lamports = candidates
    .filter((m) => m.from === pick.from && m.to === pick.to)
    .reduce((sum, m) => sum + m.lamports, 0n);
  return { from: pick.from, to: pick.to, lamports };
}

/**
 * Fallback when no System instruction moved lamports (e.g. a program debiting an account it
 * owns): the per-account lamport deltas (postBalances − preBalances) with the fee given back to
 * the fee payer (index 0). Token accounts are left out — their lamports move with wrapped-SOL
 * token transfers and rent, which token_transfers already describe. The largest decrease is the
 * sender, the largest increase the receiver, the amount the smaller of the two; ties go to the
 * lower account index. Null when either side is missing or the balance arrays are unusable.
 */
export function nativeFromBalanceDeltas(
  meta: JsonObject | null,
  keys: readonly (string | null)[],
  fee: bigint | null,
  tokens: TokenBalances,
): NativeSummary | null {
  const pre = asArray(meta?.preBalances).map(toBigInt);
  const post = asArray(meta?.postBalances).map(toBigInt);
  if (pre.length === 0 || pre.length !== post.length) return null;
  const tokenIndexes = new Set(tokens.accounts.map((a) => a.accountIndex));
  let down: { i: number; d: bigint } | null = null;
  let up: { i: number; d: bigint } | null = null;
  for (let i = 0; i < pre.length; i++) {
    const a = pre[i];
    const b = post[i];
    if (a === null || b === null || tokenIndexes.has(i)) continue;
    let d = b - a;
    if (i === 0 && fee !== null) d += fee;
    if (d < 0n && (down === null || d < down.d)) down = { i, d };
    if (d > 0n && (up === null || d > up.d)) up = { i, d };
  }
  if (!down || !up) return null;
  const lost = -down.d;
  return {
    from: down.i < keys.length ? keys[down.i] : null,
    to: up.i < keys.length ? keys[up.i] : null,
    lamports: lost < up.d ? lost : up.d,
  };
}
