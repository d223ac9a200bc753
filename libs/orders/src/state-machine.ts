/**
 * Order state machine of the integrator API (spec "States and transitions"), as a pure function:
 * no I/O, so the gateway (refunds) and the order tracker (deposits, expiry, channel status,
 * settlement) share one set of rules and replaying an event is detectable (`unchanged`).
 */
export const ORDER_STATES = [
  'Depositing',
  'Exchanging',
  'CancelledNoDeposit',
  'ManualReview',
  'RefundAddressPending',
  'ChainFailed',
  'SlippageFailed',
  'Completed',
  'Refunded',
  'FailedNoRefund',
  'Settled',
] as const;
export type OrderState = (typeof ORDER_STATES)[number];

/** Outcome reported by a channel's status endpoint. */
export type ChannelOutcome = 'Completed' | 'ChainFailed' | 'SlippageFailed' | 'Refunded' | 'FailedNoRefund';

export type OrderEvent =
  | { type: 'deposit'; amount: bigint; at: Date }
  | { type: 'expire'; at: Date }
  | { type: 'channel_status'; outcome: ChannelOutcome }
  /** The platform forwarded the paid order's net amount to its channel (the state stays; the forward's hash is recorded). */
  | { type: 'forwarded' }
  /** The fresh quote for the net amount is below the order's minimum output (or the channel's minimum input): nothing was forwarded. */
  | { type: 'forward_refused' }
  /** A failed swap's principal went back to the refund address (minus gas). */
  | { type: 'refund_sent' }
  /** A failed swap has nowhere to send the principal yet. */
  | { type: 'refund_address_missing' }
  /** An accepted refund request of an unpaid order whose deposit window has passed. */
  | { type: 'refund_request'; at: Date }
  | { type: 'settle' };

export interface OrderFacts {
  state: OrderState;
  /** Source amount the order was created for (smallest unit). */
  amount: bigint;
  expireAt: Date;
}

export type Transition =
  | { kind: 'moved'; to: OrderState; commission: boolean }
  | { kind: 'unchanged'; reason: string };

const FINAL: ReadonlySet<OrderState> = new Set(['Settled', 'Refunded', 'FailedNoRefund', 'Completed']);

/**
 * States that settlement closes, and whether the integrator earns its commission there. A failed
 * swap is not settled: it ends in `Refunded` or `FailedNoRefund` (docs/decisions.md#d21); an unpaid
 * cancelled order is settled (without commission) once its refund window has passed.
 */
const SETTLEABLE: ReadonlyMap<OrderState, boolean> = new Map<OrderState, boolean>([
  ['Completed', true],
  ['CancelledNoDeposit', false],
]);

/** States a refund request can no longer change (the spec's "rejected as final"); Completed still settles. */
export function isFinal(state: OrderState): boolean {
  return FINAL.has(state);
}

export function nextState(order: OrderFacts, event: OrderEvent): Transition {
  const s = order.state;
  switch (event.type) {
    case 'deposit':
      if (s === 'Depositing') {
        if (event.at.getTime() >= order.expireAt.getTime()) return moved('ManualReview');
        if (event.amount !== order.amount) return moved('ManualReview');
        return moved('Exchanging');
      }
      // a deposit after the order was cancelled for want of one needs a person
      if (s === 'CancelledNoDeposit') return moved('ManualReview');
      return same(`deposit ignored in ${s}`);
    case 'expire':
      if (s === 'Depositing' && event.at.getTime() >= order.expireAt.getTime()) return moved('CancelledNoDeposit');
      return same(`expiry ignored in ${s}`);
    case 'channel_status':
      if (s === 'Exchanging') return moved(event.outcome);
      // after a failure the channel's later word on the principal: returned, or lost
      if ((s === 'ChainFailed' || s === 'SlippageFailed' || s === 'RefundAddressPending') && (event.outcome === 'Refunded' || event.outcome === 'FailedNoRefund')) {
        return moved(event.outcome);
      }
      return same(`channel status ignored in ${s}`);
    case 'forwarded':
      if (s === 'Exchanging') return moved('Exchanging');
      return same(`forward ignored in ${s}`);
    case 'forward_refused':
      if (s === 'Exchanging') return moved('SlippageFailed');
      return same(`forward refusal ignored in ${s}`);
    case 'refund_sent':
      if (s === 'ChainFailed' || s === 'SlippageFailed' || s === 'RefundAddressPending') return moved('Refunded');
      return same(`refund ignored in ${s}`);
    case 'refund_address_missing':
      if (s === 'ChainFailed' || s === 'SlippageFailed') return moved('RefundAddressPending');
      return same(`refund address wait ignored in ${s}`);
    case 'refund_request':
      if ((s === 'Depositing' || s === 'CancelledNoDeposit') && event.at.getTime() >= order.expireAt.getTime()) return moved('ManualReview');
      return same(`refund request moves nothing in ${s}`);
    case 'settle': {
      const earns = SETTLEABLE.get(s);
      if (earns === undefined) return same(`not settleable in ${s}`);
      return { kind: 'moved', to: 'Settled', commission: earns };
    }
  }
}

function moved(to: OrderState): Transition {
  return { kind: 'moved', to, commission: false };
}

function same(reason: string): Transition {
  return { kind: 'unchanged', reason };
}
