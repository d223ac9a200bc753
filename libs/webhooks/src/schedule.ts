/**
 * The retry schedule of a failed webhook batch: the interval doubles from 1 second and never
 * exceeds 36 hours; 36 hours after a batch's first failure comes the last attempt, and when it
 * fails the application's webhook is disabled (spec, "Limits").
 */
export const FIRST_RETRY_MS = 1_000;
export const MAX_RETRY_INTERVAL_MS = 36 * 3600 * 1000;
export const GIVE_UP_AFTER_MS = 36 * 3600 * 1000;

/** Wait before attempt `attempts + 1`, after `attempts` failed ones (≥ 1). */
export function retryDelayMs(attempts: number): number {
  const exp = Math.max(0, attempts - 1);
  return exp >= 40 ? MAX_RETRY_INTERVAL_MS : Math.min(FIRST_RETRY_MS * 2 ** exp, MAX_RETRY_INTERVAL_MS);
}

/**
 * When to try again after `attempts` failed attempts, the last at `nowMs`: the doubling interval,
 * but never past the give-up time. The doubling alone would jump from 18.2 h to 36.4 h after the
 * first failure; instead the last attempt lands at 36 h exactly and decides the give-up there.
 */
export function nextAttemptAt(attempts: number, firstFailedAtMs: number, nowMs: number): number {
  return Math.min(nowMs + retryDelayMs(attempts), Math.max(nowMs, firstFailedAtMs + GIVE_UP_AFTER_MS));
}

/** Whether a batch that first failed at `firstFailedAtMs` is past the give-up time. */
export function givenUp(firstFailedAtMs: number, nowMs: number): boolean {
  return nowMs - firstFailedAtMs >= GIVE_UP_AFTER_MS;
}

/** The retry state of one queued transaction: its failed POSTs, and when the first of them failed (null: none yet). */
export interface QueuedRetryState {
  attempts: number;
  firstFailedAt: number | null;
}

/**
 * A failed POST of queued transactions (the queue head, in order) at `nowMs`: each one's state
 * after it (one more failed attempt; its clock started now unless it ran already), whether the
 * batch is past its give-up time (36 h after the earliest failure among them: the batch's first
 * failure), and otherwise when to try again (the schedule of the batch's most-failed transaction,
 * bounded by that give-up time). Transactions queued behind and not in the POST keep their state.
 */
export function failedBatch(rows: readonly QueuedRetryState[], nowMs: number): { rows: QueuedRetryState[]; giveUp: boolean; nextAttemptAt: number | null } {
  const after = rows.map((r) => ({ attempts: r.attempts + 1, firstFailedAt: r.firstFailedAt ?? nowMs }));
  const firstFailedAt = Math.min(...after.map((r) => r.firstFailedAt));
  if (givenUp(firstFailedAt, nowMs)) return { rows: after, giveUp: true, nextAttemptAt: null };
  return { rows: after, giveUp: false, nextAttemptAt: nextAttemptAt(Math.max(...after.map((r) => r.attempts)), firstFailedAt, nowMs) };
}
