import { isFinal, nextState, type OrderState } from './state-machine';

/**
 * The refund request of the integrator API as a pure decision (spec "States and transitions" and
 * the refund error table). The caller has authenticated the integrator, found the order, checked
 * the address format and holds the order's version for the write.
 */
export interface RefundFacts {
  state: OrderState;
  amount: bigint;
  expireAt: Date;
  autoCancelAt: Date;
  /** Refund address already recorded for the order, if any. */
  refundAddress: string | null;
  /** Whether the channel's execution details (status, transactions) were recorded. */
  executionRecorded: boolean;
  /** What a failed swap can give back (the deposit seen); null when nothing was deposited. */
  refundableAmount: bigint | null;
}

export type RefundError =
  | 'order_already_finalized'
  | 'order_not_in_refundable_state'
  | 'order_not_expired_yet'
  | 'order_auto_cancel_window_passed'
  | 'refund_requires_manual_confirmation'
  | 'no_amount_to_refund'
  | 'refund_address_cannot_be_changed';

export type RefundDecision =
  /** Nothing to write: the same address was already recorded. */
  | { kind: 'repeat' }
  /** Record the address; `to` is the new state when the request moves the order. */
  | { kind: 'accept'; to: OrderState | null }
  | { kind: 'reject'; error: RefundError };

const FAILED: ReadonlySet<OrderState> = new Set(['RefundAddressPending', 'ChainFailed', 'SlippageFailed']);

export function decideRefund(order: RefundFacts, address: string, now: Date): RefundDecision {
  if (order.refundAddress !== null) {
    return order.refundAddress === address ? { kind: 'repeat' } : { kind: 'reject', error: 'refund_address_cannot_be_changed' };
  }
  if (isFinal(order.state)) return { kind: 'reject', error: 'order_already_finalized' };
  if (order.state === 'Depositing' || order.state === 'CancelledNoDeposit') {
    if (now.getTime() < order.expireAt.getTime()) return { kind: 'reject', error: 'order_not_expired_yet' };
    if (now.getTime() >= order.autoCancelAt.getTime()) return { kind: 'reject', error: 'order_auto_cancel_window_passed' };
    const t = nextState({ state: order.state, amount: order.amount, expireAt: order.expireAt }, { type: 'refund_request', at: now });
    return { kind: 'accept', to: t.kind === 'moved' ? t.to : null };
  }
  if (FAILED.has(order.state)) {
    if (!order.executionRecorded) return { kind: 'reject', error: 'refund_requires_manual_confirmation' };
    if (order.refundableAmount === null || order.refundableAmount <= 0n) return { kind: 'reject', error: 'no_amount_to_refund' };
    // the order tracker sends the principal back (minus gas) and moves the order to Refunded
    return { kind: 'accept', to: null };
  }
  return { kind: 'reject', error: 'order_not_in_refundable_state' };
}

/** States whose deposit a refund gives back once a refund address is known. */
export const REFUND_SENDING_STATES: readonly OrderState[] = ['ChainFailed', 'SlippageFailed', 'RefundAddressPending', 'ManualReview'];

export interface RefundReadiness {
  state: OrderState;
  refundAddress: string | null;
  /** What the deposit paid; null when nothing arrived. */
  received: bigint | null;
  /** Whether the channel's (or the executor's) execution details were recorded. */
  executionRecorded: boolean;
  /** Whether the platform forwarded the deposit to the channel. */
  forwarded: boolean;
  /** Whether the channel reported the forwarded principal given back to the platform's address. */
  channelReturned: boolean;
  resolution: 'refund' | 'execute' | null;
}

export type RefundReady = { ready: true } | { ready: false; reason: 'no_refund_address' | 'nothing_deposited' | 'not_refundable' | 'execution_not_recorded' | 'principal_with_channel' };

/**
 * Whether the platform sends an order's refund now (the refund job's pass): a failed swap with a
 * refund address and its execution recorded, whose principal is at the deposit address (never
 * forwarded, or given back by the channel); a ManualReview order an operator resolved as a
 * refund. A refund sent while the channel still holds the principal would give back only the
 * fees and strand the rest.
 */
export function refundReady(f: RefundReadiness): RefundReady {
  if (f.received === null || f.received <= 0n) return { ready: false, reason: 'nothing_deposited' };
  if (f.state === 'ManualReview') {
    if (f.resolution !== 'refund') return { ready: false, reason: 'not_refundable' };
    return f.refundAddress ? { ready: true } : { ready: false, reason: 'no_refund_address' };
  }
  if (f.state !== 'ChainFailed' && f.state !== 'SlippageFailed' && f.state !== 'RefundAddressPending') return { ready: false, reason: 'not_refundable' };
  if (!f.refundAddress) return { ready: false, reason: 'no_refund_address' };
  if (!f.executionRecorded) return { ready: false, reason: 'execution_not_recorded' };
  if (f.forwarded && !f.channelReturned) return { ready: false, reason: 'principal_with_channel' };
  return { ready: true };
}

/**
 * What a refund transfer sends, in the source token's smallest unit.
 *
 * - `principal`: what the deposit paid (`deposit_amount`); a failed swap earns no fee and no
 *   commission, so all of it goes back.
 * - `held`: what the deposit address holds now; when a channel gave back less than it took (its
 *   own fees), only that is there to give.
 * - `networkFee`: the most the refund transfer can cost (the chain's fee plan: gas limit × fee
 *   cap), paid by the deposit address on top of the value.
 */
export interface RefundAmountFacts {
  principal: bigint;
  held: bigint;
  networkFee: bigint;
}

export type RefundAmount =
  /** Send `value` = min(principal, held) − networkFee. */
  | { kind: 'send'; value: bigint }
  /** The network fee takes all there is: nothing is sent (an operator decides). */
  | { kind: 'nothing_after_fee'; available: bigint; networkFee: bigint };

export function refundAmount(f: RefundAmountFacts): RefundAmount {
  if (f.principal < 0n || f.held < 0n || f.networkFee < 0n) throw new RangeError('a negative amount');
  const available = f.principal < f.held ? f.principal : f.held;
  if (available <= f.networkFee) return { kind: 'nothing_after_fee', available, networkFee: f.networkFee };
  return { kind: 'send', value: available - f.networkFee };
}
