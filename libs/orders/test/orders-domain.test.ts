import { expect } from 'chai';
import {
  decideRefund, deviatesBeyond, feeRateString, minOutForSlippage, nextState, outAfterCommission, parseDecimal, parseFeeRatePercent,
  percentToRateSnapshot, rateSnapshot, splitFees, type OrderFacts, type RefundFacts,
} from '../src';

const expireAt = new Date('2026-01-01T00:30:00Z');
const before = new Date('2026-01-01T00:10:00Z');
const after = new Date('2026-01-01T00:31:00Z');
const order = (state: OrderFacts['state']): OrderFacts => ({ state, amount: 100_000n, expireAt });

describe('order state machine', () => {
  it('a deposit of the ordered amount before expiry starts the exchange', () => {
    expect(nextState(order('Depositing'), { type: 'deposit', amount: 100_000n, at: before })).to.deep.equal({
      kind: 'moved', to: 'Exchanging', commission: false,
    });
  });

  it('a deposit of another amount, or after expiry, goes to manual review', () => {
    expect(nextState(order('Depositing'), { type: 'deposit', amount: 99_999n, at: before })).to.include({ to: 'ManualReview' });
    expect(nextState(order('Depositing'), { type: 'deposit', amount: 100_000n, at: after })).to.include({ to: 'ManualReview' });
    expect(nextState(order('CancelledNoDeposit'), { type: 'deposit', amount: 100_000n, at: after })).to.include({ to: 'ManualReview' });
  });

  it('expiry cancels only an unpaid order whose expire_at has passed', () => {
    expect(nextState(order('Depositing'), { type: 'expire', at: after })).to.include({ to: 'CancelledNoDeposit' });
    expect(nextState(order('Depositing'), { type: 'expire', at: before }).kind).to.equal('unchanged');
    expect(nextState(order('Exchanging'), { type: 'expire', at: after }).kind).to.equal('unchanged');
  });

  it('expiry and a late deposit turn at the expire_at instant itself, not a millisecond earlier', () => {
    const justBefore = new Date(expireAt.getTime() - 1);
    expect(nextState(order('Depositing'), { type: 'expire', at: justBefore }).kind).to.equal('unchanged');
    expect(nextState(order('Depositing'), { type: 'expire', at: expireAt })).to.include({ to: 'CancelledNoDeposit' });
    expect(nextState(order('Depositing'), { type: 'deposit', amount: 100_000n, at: justBefore })).to.include({ to: 'Exchanging' });
    expect(nextState(order('Depositing'), { type: 'deposit', amount: 100_000n, at: expireAt })).to.include({ to: 'ManualReview' });
  });

  it('channel status moves an exchanging order to each terminal outcome', () => {
    for (const outcome of ['Completed', 'ChainFailed', 'SlippageFailed', 'Refunded', 'FailedNoRefund'] as const) {
      expect(nextState(order('Exchanging'), { type: 'channel_status', outcome })).to.include({ to: outcome });
    }
    expect(nextState(order('Depositing'), { type: 'channel_status', outcome: 'Completed' }).kind).to.equal('unchanged');
  });

  it('settlement earns commission only after a successful swap and is not repeated', () => {
    expect(nextState(order('Completed'), { type: 'settle' })).to.deep.equal({ kind: 'moved', to: 'Settled', commission: true });
    expect(nextState(order('SlippageFailed'), { type: 'settle' }).kind, 'a failed swap ends in a refund, not a settlement').to.equal('unchanged');
    expect(nextState(order('CancelledNoDeposit'), { type: 'settle' })).to.deep.equal({ kind: 'moved', to: 'Settled', commission: false });
    expect(nextState(order('Settled'), { type: 'settle' }).kind).to.equal('unchanged');
    expect(nextState(order('Exchanging'), { type: 'settle' }).kind).to.equal('unchanged');
  });

  it('the forward keeps an exchanging order exchanging (its hash recorded); a refused forward is SlippageFailed; neither moves another state', () => {
    expect(nextState(order('Exchanging'), { type: 'forwarded' })).to.deep.equal({ kind: 'moved', to: 'Exchanging', commission: false });
    expect(nextState(order('Exchanging'), { type: 'forward_refused' })).to.deep.equal({ kind: 'moved', to: 'SlippageFailed', commission: false });
    // A second executor that lost the race for the forward records no second event.
    expect(nextState({ ...order('Exchanging'), forwarded: true }, { type: 'forwarded' })).to.deep.equal({ kind: 'unchanged', reason: 'forward already recorded' });
    for (const state of ['Depositing', 'ManualReview', 'SlippageFailed', 'Completed', 'Settled'] as const) {
      expect(nextState(order(state), { type: 'forwarded' }).kind, state).to.equal('unchanged');
      expect(nextState(order(state), { type: 'forward_refused' }).kind, state).to.equal('unchanged');
    }
  });

  it('a replayed deposit after the exchange started changes nothing', () => {
    expect(nextState(order('Exchanging'), { type: 'deposit', amount: 100_000n, at: before }).kind).to.equal('unchanged');
  });
});

describe('refund moves of failed and unpaid orders', () => {
  it('a failed swap is refunded, or waits for an address', () => {
    expect(nextState(order('ChainFailed'), { type: 'refund_sent' })).to.include({ to: 'Refunded' });
    expect(nextState(order('SlippageFailed'), { type: 'refund_address_missing' })).to.include({ to: 'RefundAddressPending' });
    expect(nextState(order('RefundAddressPending'), { type: 'refund_sent' })).to.include({ to: 'Refunded' });
    expect(nextState(order('Refunded'), { type: 'refund_sent' }).kind).to.equal('unchanged');
    // the channel's later report on a failed swap
    expect(nextState(order('ChainFailed'), { type: 'channel_status', outcome: 'Refunded' })).to.include({ to: 'Refunded' });
    expect(nextState(order('RefundAddressPending'), { type: 'channel_status', outcome: 'FailedNoRefund' })).to.include({ to: 'FailedNoRefund' });
    expect(nextState(order('SlippageFailed'), { type: 'channel_status', outcome: 'Completed' }).kind).to.equal('unchanged');
  });

  it('a refund request after expiry sends an unpaid order to manual review', () => {
    expect(nextState(order('Depositing'), { type: 'refund_request', at: after })).to.include({ to: 'ManualReview' });
    expect(nextState(order('CancelledNoDeposit'), { type: 'refund_request', at: after })).to.include({ to: 'ManualReview' });
    expect(nextState(order('Depositing'), { type: 'refund_request', at: before }).kind).to.equal('unchanged');
  });
});

describe('refund request decision (spec refund error table)', () => {
  const autoCancelAt = new Date('2026-01-02T00:30:00Z');
  const facts = (over: Partial<RefundFacts>): RefundFacts => ({
    state: 'Depositing', amount: 100_000n, expireAt, autoCancelAt, refundAddress: null, executionRecorded: false, refundableAmount: null, ...over,
  });
  const late = new Date('2026-01-02T00:31:00Z');

  it('unpaid orders: only between expire_at and auto_cancel_at, then manual review', () => {
    expect(decideRefund(facts({}), 'A', before)).to.deep.equal({ kind: 'reject', error: 'order_not_expired_yet' });
    expect(decideRefund(facts({}), 'A', after)).to.deep.equal({ kind: 'accept', to: 'ManualReview' });
    expect(decideRefund(facts({ state: 'CancelledNoDeposit' }), 'A', after)).to.deep.equal({ kind: 'accept', to: 'ManualReview' });
    expect(decideRefund(facts({}), 'A', late)).to.deep.equal({ kind: 'reject', error: 'order_auto_cancel_window_passed' });
    expect(decideRefund(facts({}), 'A', autoCancelAt)).to.deep.equal({ kind: 'reject', error: 'order_auto_cancel_window_passed' });
  });

  it('failed swaps: need execution details and something to give back; the state stays for the tracker', () => {
    for (const state of ['ChainFailed', 'SlippageFailed', 'RefundAddressPending'] as const) {
      expect(decideRefund(facts({ state }), 'A', after)).to.deep.equal({ kind: 'reject', error: 'refund_requires_manual_confirmation' });
      expect(decideRefund(facts({ state, executionRecorded: true }), 'A', after)).to.deep.equal({ kind: 'reject', error: 'no_amount_to_refund' });
      expect(decideRefund(facts({ state, executionRecorded: true, refundableAmount: 0n }), 'A', after)).to.deep.equal({ kind: 'reject', error: 'no_amount_to_refund' });
      expect(decideRefund(facts({ state, executionRecorded: true, refundableAmount: 5n }), 'A', before)).to.deep.equal({ kind: 'accept', to: null });
    }
  });

  it('final states are rejected, others are not refundable, a recorded address is idempotent and fixed', () => {
    for (const state of ['Completed', 'Refunded', 'FailedNoRefund', 'Settled'] as const) {
      expect(decideRefund(facts({ state }), 'A', after)).to.deep.equal({ kind: 'reject', error: 'order_already_finalized' });
    }
    for (const state of ['Exchanging', 'ManualReview'] as const) {
      expect(decideRefund(facts({ state }), 'A', after)).to.deep.equal({ kind: 'reject', error: 'order_not_in_refundable_state' });
    }
    expect(decideRefund(facts({ state: 'ManualReview', refundAddress: 'A' }), 'A', after)).to.deep.equal({ kind: 'repeat' });
    expect(decideRefund(facts({ state: 'Refunded', refundAddress: 'A' }), 'A', after)).to.deep.equal({ kind: 'repeat' });
    expect(decideRefund(facts({ state: 'ManualReview', refundAddress: 'A' }), 'B', after)).to.deep.equal({ kind: 'reject', error: 'refund_address_cannot_be_changed' });
  });
});

describe('integrator fee math', () => {
  it('accepts fee_rate from 0.01 % to 10.00 % only', () => {
    expect(parseFeeRatePercent('0.01')).to.equal(1);
    expect(parseFeeRatePercent('10.00')).to.equal(1000);
    expect(parseFeeRatePercent('0.5')).to.equal(50);
    for (const bad of ['0', '0.00', '10.01', '11', '-1', '0.001', 'abc', '']) expect(parseFeeRatePercent(bad), bad).to.equal(null);
    expect(feeRateString(25)).to.equal('0.25');
    expect(feeRateString(1000)).to.equal('10.00');
  });

  it('rate snapshots are decimal fractions: "0.0100" is 1 %', () => {
    expect(rateSnapshot(100)).to.equal('0.0100');
    expect(rateSnapshot(1)).to.equal('0.0001');
    expect(rateSnapshot(1000)).to.equal('0.1000');
    expect(percentToRateSnapshot(0.3)).to.equal('0.0030');
    expect(percentToRateSnapshot(0.225)).to.equal('0.00225');
    expect(percentToRateSnapshot(0)).to.equal('0.0000');
    expect(percentToRateSnapshot(1.5)).to.equal('0.0150');
  });

  it('the commission comes on top of the base fee: original = platform + integrator', () => {
    // 0.30 % of 123456789 = 370370.367 → 370370; the channel's base fee 1234567 stays the platform's
    expect(splitFees(123_456_789n, 1_234_567n, 30)).to.deep.equal({
      fee_platform: '1234567', fee_partner: '0', fee_integrator: '370370', fee_platform_original: '1604937',
    });
    // beyond 2^53: no precision lost
    expect(splitFees(10n ** 30n, 10n ** 28n, 100).fee_integrator).to.equal((10n ** 28n).toString());
  });

  it('without a key there is no commission and the original fee is the base fee', () => {
    expect(splitFees(1_000_000n, 5_000n, null)).to.deep.equal({ fee_platform: '5000', fee_partner: '0', fee_integrator: '0', fee_platform_original: '5000' });
    expect(splitFees(1_000_000n, 5_000n, 1000)).to.include({ fee_integrator: '100000', fee_platform: '5000', fee_platform_original: '105000' });
  });

  it('the estimated output shrinks by the commission share of the source amount', () => {
    // 1 % of the source leaves as commission: 990 of 1000 remain
    expect(outAfterCommission(1000n, 1_000_000n, 10_000n)).to.equal(990n);
    expect(outAfterCommission(999n, 3n, 1n)).to.equal(666n);
    expect(outAfterCommission(1000n, 1_000_000n, 0n)).to.equal(1000n);
  });
});

describe('decimals without floats', () => {
  it('reads JSON number texts, exponents included', () => {
    expect(parseDecimal('0.01')).to.deep.equal({ negative: false, digits: 1n, scale: 2 });
    expect(parseDecimal('1e-7')).to.deep.equal({ negative: false, digits: 1n, scale: 7 });
    expect(parseDecimal('2.5E+3')).to.deep.equal({ negative: false, digits: 2500n, scale: 0 });
    expect(parseDecimal('abc')).to.equal(undefined);
  });

  it('min out for a slippage is floored: 12345 × 0.99 = 12221.55 → 12221', () => {
    expect(minOutForSlippage(12_345n, 0.01)).to.equal(12_221n);
    expect(minOutForSlippage(10n ** 24n, 0.005)).to.equal(995n * 10n ** 21n);
    expect(minOutForSlippage(100n, 1e-7)).to.equal(99n);
  });

  it('deviation beyond a threshold in basis points, both directions', () => {
    expect(deviatesBeyond(10_000n, 9_900n, 100)).to.equal(false); // exactly 1 %
    expect(deviatesBeyond(10_000n, 9_899n, 100)).to.equal(true);
    expect(deviatesBeyond(10_000n, 10_101n, 100)).to.equal(true);
  });
});
