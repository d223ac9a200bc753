import type { FeePlan } from './outgoing-transfers';

/**
 * The gas station's decisions, without I/O (docs/decisions.md, "gas for token deposit
 * addresses"). A deposit address that received only a token holds no native coin, but each
 * transaction it sends pays `maxNetworkFee` at most (gas limit × fee cap: what the node checks
 * the balance against). The station sends exactly what is missing for the planned transfers.
 */
export type GasTopUp =
  /** The address holds enough already: nothing is sent. */
  | { kind: 'enough'; needed: bigint; held: bigint }
  /** Send `value` = needed − held. */
  | { kind: 'top_up'; value: bigint; needed: bigint; held: bigint };

/** What the address must hold to pay every planned transfer at its fee plan, and what is missing of it. */
export function gasTopUp(plans: readonly FeePlan[], held: bigint): GasTopUp {
  if (held < 0n) throw new RangeError('a negative balance');
  let needed = 0n;
  for (const p of plans) {
    if (p.maxNetworkFee < 0n) throw new RangeError('a negative network fee');
    needed += p.maxNetworkFee;
  }
  return held >= needed ? { kind: 'enough', needed, held } : { kind: 'top_up', value: needed - held, needed, held };
}

/**
 * The nonce of the station's next transaction: the node's pending count, unless the station has
 * signed and stored transactions the node does not count (not yet broadcast, or dropped from its
 * pool): then the one after the highest of those, so a stored transaction is never displaced by
 * a new one with its nonce (it is broadcast again, byte for byte, by `resumeOpen`).
 */
export function stationNonce(pending: number, highestStoredOpen: number | null): number {
  if (!Number.isInteger(pending) || pending < 0) throw new RangeError(`pending count ${pending}`);
  return highestStoredOpen === null || highestStoredOpen < pending ? pending : highestStoredOpen + 1;
}

/** Whether the station's balance is under the operator's warning level (0: no warning). */
export function stationLow(balance: bigint, warnBelow: bigint): boolean {
  return warnBelow > 0n && balance < warnBelow;
}
