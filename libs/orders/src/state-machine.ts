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
  /**
   * An operator refunds an order's deposit (sent by the refund job): a ManualReview order, a failed
   * swap whose principal is at the platform's address, or a paid order not forwarded yet.
   */
  | { type: 'operator_refund' }
  /** An operator closes an order whose principal is lost (the channel's, or never recoverable): FailedNoRefund. */
  | { type: 'operator_close' }
  /** A failed swap's whole deposit is less than the network fee of sending it back: nothing can be refunded. */
  | { type: 'refund_impossible' }
  /** An operator resolves a ManualReview order by handing its deposit to the executor as a paid order. */
  | { type: 'operator_execute' }
  | { type: 'settle' };

/** How an operator resolved a ManualReview order (the order stays there until a refund is sent). */
export type ManualResolution = 'refund' | 'execute';

export interface OrderFacts {
  state: OrderState;
  /** Source amount the order was created for (smallest unit). */
  amount: bigint;
  expireAt: Date;
  /** What the deposit paid (smallest unit); null or absent when nothing arrived. */
  received?: bigint | null;
  /** An operator's resolution of a ManualReview order; null or absent when none. */
  resolution?: ManualResolution | null;
  /**
   * The deposit was paid to the platform's own address of the order, which sends the forward: a
   * channel's refund returns there, so the order is not refunded until the platform sends the
   * refund itself. Absent for orders paid to a channel's address directly.
   */
  platformHeld?: boolean;
  /** The channel reported that it gave a forwarded principal back (to the platform's address). */
  channelReturned?: boolean;
  /** The forward's hash is on the order already: a second `forwarded` (a racing executor, a replay) records nothing. */
  forwarded?: boolean;
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
      // an expired order whose refund request came before its deposit waits for a person: the
      // deposit is recorded there, once, so an operator can refund or execute it
      if (s === 'ManualReview' && !order.received && !order.resolution) return moved('ManualReview');
      return same(`deposit ignored in ${s}`);
    case 'expire':
      if (s === 'Depositing' && event.at.getTime() >= order.expireAt.getTime()) return moved('CancelledNoDeposit');
      return same(`expiry ignored in ${s}`);
    case 'channel_status':
      if (order.platformHeld && event.outcome === 'Refunded') {
        // the channel gave the principal back to the platform's address: a failed swap whose
        // refund the platform sends (`refund_sent`)
        if (s === 'Exchanging') return moved('ChainFailed');
        // recorded once in place: the principal is back, so the platform's refund may go out
        if ((s === 'ChainFailed' || s === 'SlippageFailed' || s === 'RefundAddressPending') && !order.channelReturned) return moved(s);
        return same(`a channel refund to the platform's address leaves ${s} for the platform's refund`);
      }
      if (s === 'Exchanging') return moved(event.outcome);
      // after a failure the channel's later word on the principal: returned, or lost
      if ((s === 'ChainFailed' || s === 'SlippageFailed' || s === 'RefundAddressPending') && (event.outcome === 'Refunded' || event.outcome === 'FailedNoRefund')) {
        return moved(event.outcome);
      }
      return same(`channel status ignored in ${s}`);
    case 'forwarded':
      if (s === 'Exchanging' && !order.forwarded) return moved('Exchanging');
      return same(order.forwarded ? 'forward already recorded' : `forward ignored in ${s}`);
    case 'forward_refused':
      if (s === 'Exchanging') return moved('SlippageFailed');
      return same(`forward refusal ignored in ${s}`);
    case 'refund_sent':
      if (s === 'ChainFailed' || s === 'SlippageFailed' || s === 'RefundAddressPending') return moved('Refunded');
      // only the refund an operator ordered ends a manual review this way
      if (s === 'ManualReview' && order.resolution === 'refund') return moved('Refunded');
      return same(`refund ignored in ${s}`);
    case 'refund_address_missing':
      if (s === 'ChainFailed' || s === 'SlippageFailed') return moved('RefundAddressPending');
      return same(`refund address wait ignored in ${s}`);
    case 'refund_request':
      if ((s === 'Depositing' || s === 'CancelledNoDeposit') && event.at.getTime() >= order.expireAt.getTime()) return moved('ManualReview');
      return same(`refund request moves nothing in ${s}`);
    case 'operator_refund':
      // every order holding a deposit at the platform's address has this way out (docs/decisions.md#d163)
      if (order.resolution) return same(`already resolved: ${order.resolution}`);
      if (!order.received || order.received <= 0n) return same('nothing was deposited');
      // recorded in place: the order leaves ManualReview when the refund is sent (`refund_sent`)
      if (s === 'ManualReview') return moved('ManualReview');
      if (s === 'ChainFailed' || s === 'SlippageFailed' || s === 'RefundAddressPending') {
        if (order.forwarded && !order.channelReturned) return same('the principal is with the channel');
        return moved(s);
      }
      // a paid order the executor has not forwarded: taken back from it, refunded as a resolved review
      if (s === 'Exchanging') return order.forwarded ? same('the principal is with the channel') : moved('ManualReview');
      return same(`operator refund ignored in ${s}`);
    case 'operator_close':
      if (FINAL.has(s)) return same(`final: ${s}`);
      if (s === 'Depositing' || s === 'CancelledNoDeposit') return same('nothing was deposited: the order expires and settles');
      return moved('FailedNoRefund');
    case 'refund_impossible':
      if (s === 'ChainFailed' || s === 'SlippageFailed' || s === 'RefundAddressPending' || (s === 'ManualReview' && order.resolution === 'refund')) return moved('FailedNoRefund');
      return same(`refund impossibility ignored in ${s}`);
    case 'operator_execute':
      // the deposit becomes a paid order: the executor forwards it like any other
      if (s !== 'ManualReview') return same(`operator execution ignored in ${s}`);
      if (order.resolution) return same(`already resolved: ${order.resolution}`);
      if (!order.received || order.received <= 0n) return same('nothing was deposited');
      return moved('Exchanging');
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
