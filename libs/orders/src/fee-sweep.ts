import type { OrderState } from './state-machine';

/**
 * The fee sweep's decision, without I/O: what of an order's fees (`fee_platform` +
 * `fee_integrator`, source units) moves from its deposit address to the treasury. Only a swap
 * that succeeded earned them; a failed one gives everything back (the refund).
 */
export const SWEEPABLE_STATES: readonly OrderState[] = ['Completed', 'Settled'];

export interface SweepFacts {
  state: OrderState;
  feePlatform: bigint;
  feeIntegrator: bigint;
  /** What the deposit address holds now. */
  held: bigint;
  /** The most the sweep transfer can cost (gas limit × fee cap), left behind to pay for it. */
  networkFee: bigint;
}

export type SweepDecision =
  /** Send `value`: the fees, or less when the address holds less than fees + network fee. */
  | { kind: 'sweep'; value: bigint; fees: bigint }
  | { kind: 'skip'; reason: 'not_earned' | 'no_fees' | 'nothing_after_fee' };

export function decideSweep(f: SweepFacts): SweepDecision {
  if (!SWEEPABLE_STATES.includes(f.state)) return { kind: 'skip', reason: 'not_earned' };
  const fees = f.feePlatform + f.feeIntegrator;
  if (fees <= 0n) return { kind: 'skip', reason: 'no_fees' };
  const spendable = f.held - f.networkFee;
  if (spendable <= 0n) return { kind: 'skip', reason: 'nothing_after_fee' };
  return { kind: 'sweep', value: fees < spendable ? fees : spendable, fees };
}
