import { expect } from 'chai';
import { decideSweep, nextState, refundAmount, refundReady, type OrderFacts, type RefundReadiness } from '../src';

const expireAt = new Date('2026-01-01T00:30:00Z');
const facts = (state: OrderFacts['state'], over: Partial<OrderFacts> = {}): OrderFacts => ({ state, amount: 100_000n, expireAt, ...over });

describe('refund amount of a failed swap', () => {
  it('is the principal less the network fee of the refund transfer', () => {
    expect(refundAmount({ principal: 100_000n, held: 100_000n, networkFee: 2_100n })).to.deep.equal({ kind: 'send', value: 97_900n });
  });

  it('is taken from what the address holds when a channel gave back less than the principal', () => {
    expect(refundAmount({ principal: 100_000n, held: 95_000n, networkFee: 2_100n })).to.deep.equal({ kind: 'send', value: 92_900n });
  });

  it('never sends more than the principal, whatever else the address holds', () => {
    expect(refundAmount({ principal: 100_000n, held: 500_000n, networkFee: 2_100n })).to.deep.equal({ kind: 'send', value: 97_900n });
  });

  it('sends nothing when the fee takes it all', () => {
    expect(refundAmount({ principal: 2_100n, held: 2_100n, networkFee: 2_100n })).to.deep.equal({ kind: 'nothing_after_fee', available: 2_100n, networkFee: 2_100n });
    expect(refundAmount({ principal: 100_000n, held: 0n, networkFee: 1n }).kind).to.equal('nothing_after_fee');
  });

  it('refuses negative amounts', () => {
    expect(() => refundAmount({ principal: -1n, held: 0n, networkFee: 0n })).to.throw(RangeError);
  });
});

describe('fee sweep decision', () => {
  const base = { feePlatform: 300n, feeIntegrator: 200n, networkFee: 50n };
  it('moves fee_platform + fee_integrator of a completed or settled order, leaving the network fee', () => {
    expect(decideSweep({ ...base, state: 'Completed', held: 1_000n })).to.deep.equal({ kind: 'sweep', value: 500n, fees: 500n });
    expect(decideSweep({ ...base, state: 'Settled', held: 550n })).to.deep.equal({ kind: 'sweep', value: 500n, fees: 500n });
  });

  it('moves less than the fees when the address cannot also pay the transfer', () => {
    expect(decideSweep({ ...base, state: 'Settled', held: 520n })).to.deep.equal({ kind: 'sweep', value: 470n, fees: 500n });
    expect(decideSweep({ ...base, state: 'Settled', held: 50n })).to.deep.equal({ kind: 'skip', reason: 'nothing_after_fee' });
  });

  it('never touches a failed, refunded or unfinished order, nor one without fees', () => {
    for (const state of ['Exchanging', 'ChainFailed', 'SlippageFailed', 'Refunded', 'ManualReview', 'RefundAddressPending'] as const) {
      expect(decideSweep({ ...base, state, held: 10_000n }), state).to.deep.equal({ kind: 'skip', reason: 'not_earned' });
    }
    expect(decideSweep({ ...base, feePlatform: 0n, feeIntegrator: 0n, state: 'Settled', held: 10_000n })).to.deep.equal({ kind: 'skip', reason: 'no_fees' });
  });
});

describe('ManualReview resolutions', () => {
  it('an operator refund is recorded in place, then the sent refund ends the review', () => {
    expect(nextState(facts('ManualReview', { received: 90_000n }), { type: 'operator_refund' })).to.deep.equal({ kind: 'moved', to: 'ManualReview', commission: false });
    expect(nextState(facts('ManualReview', { received: 90_000n, resolution: 'refund' }), { type: 'refund_sent' })).to.include({ to: 'Refunded' });
  });

  it('a refund is not sent from ManualReview that no operator resolved so', () => {
    expect(nextState(facts('ManualReview', { received: 90_000n }), { type: 'refund_sent' }).kind).to.equal('unchanged');
    expect(nextState(facts('ManualReview', { received: 90_000n, resolution: 'execute' }), { type: 'refund_sent' }).kind).to.equal('unchanged');
  });

  it('an operator execution hands the deposit to the executor as a paid order', () => {
    expect(nextState(facts('ManualReview', { received: 90_000n }), { type: 'operator_execute' })).to.deep.equal({ kind: 'moved', to: 'Exchanging', commission: false });
  });

  it('a resolution needs a deposit and no earlier resolution; an execution a ManualReview order', () => {
    for (const type of ['operator_refund', 'operator_execute'] as const) {
      expect(nextState(facts('ManualReview', { received: null }), { type }).kind, `${type} without deposit`).to.equal('unchanged');
      expect(nextState(facts('ManualReview', { received: 0n }), { type }).kind, `${type} of zero`).to.equal('unchanged');
      expect(nextState(facts('ManualReview', { received: 5n, resolution: 'refund' }), { type }).kind, `${type} twice`).to.equal('unchanged');
      for (const state of ['Depositing', 'Completed', 'Settled', 'Refunded'] as const) {
        expect(nextState(facts(state, { received: 5n }), { type }).kind, `${type} in ${state}`).to.equal('unchanged');
      }
    }
    for (const state of ['Exchanging', 'SlippageFailed'] as const) expect(nextState(facts(state, { received: 5n }), { type: 'operator_execute' }).kind, state).to.equal('unchanged');
  });

  it('an operator refund reaches every order whose deposit is at the platform\'s address, never one the channel holds', () => {
    for (const state of ['ChainFailed', 'SlippageFailed', 'RefundAddressPending'] as const) {
      expect(nextState(facts(state, { received: 5n }), { type: 'operator_refund' }), `${state}: recorded in place`).to.deep.equal({ kind: 'moved', to: state, commission: false });
      expect(nextState(facts(state, { received: 5n, forwarded: true }), { type: 'operator_refund' }).kind, `${state} forwarded`).to.equal('unchanged');
      expect(nextState(facts(state, { received: 5n, forwarded: true, channelReturned: true }), { type: 'operator_refund' }), `${state} given back`).to.include({ to: state });
    }
    expect(nextState(facts('Exchanging', { received: 5n }), { type: 'operator_refund' }), 'paid, not forwarded: taken back').to.include({ to: 'ManualReview' });
    expect(nextState(facts('Exchanging', { received: 5n, forwarded: true }), { type: 'operator_refund' }).kind, 'forwarded').to.equal('unchanged');
  });

  it('FailedNoRefund: an operator closes an order whose principal is lost; a deposit smaller than its refund\'s network fee', () => {
    for (const state of ['Exchanging', 'ChainFailed', 'SlippageFailed', 'RefundAddressPending', 'ManualReview'] as const) {
      expect(nextState(facts(state, { received: 5n }), { type: 'operator_close' }), state).to.include({ to: 'FailedNoRefund' });
    }
    for (const state of ['Depositing', 'CancelledNoDeposit', 'Completed', 'Settled', 'Refunded', 'FailedNoRefund'] as const) {
      expect(nextState(facts(state, { received: 5n }), { type: 'operator_close' }).kind, state).to.equal('unchanged');
    }
    for (const state of ['ChainFailed', 'SlippageFailed', 'RefundAddressPending'] as const) expect(nextState(facts(state, { received: 5n }), { type: 'refund_impossible' }), state).to.include({ to: 'FailedNoRefund' });
    expect(nextState(facts('ManualReview', { received: 5n, resolution: 'refund' }), { type: 'refund_impossible' })).to.include({ to: 'FailedNoRefund' });
    expect(nextState(facts('ManualReview', { received: 5n }), { type: 'refund_impossible' }).kind, 'unresolved review').to.equal('unchanged');
    expect(nextState(facts('Exchanging', { received: 5n }), { type: 'refund_impossible' }).kind).to.equal('unchanged');
  });
});

describe('a channel refund of a platform-held deposit', () => {
  it('makes the swap a failed one the platform refunds, not a refunded order', () => {
    expect(nextState(facts('Exchanging', { platformHeld: true }), { type: 'channel_status', outcome: 'Refunded' })).to.include({ to: 'ChainFailed' });
    for (const state of ['ChainFailed', 'SlippageFailed', 'RefundAddressPending'] as const) {
      expect(nextState(facts(state, { platformHeld: true }), { type: 'channel_status', outcome: 'Refunded' }), `${state}: recorded once`).to.include({ to: state });
      expect(nextState(facts(state, { platformHeld: true, channelReturned: true }), { type: 'channel_status', outcome: 'Refunded' }).kind, `${state}: not again`).to.equal('unchanged');
      expect(nextState(facts(state, { platformHeld: true }), { type: 'refund_sent' }), state).to.include({ to: 'Refunded' });
    }
  });

  it('still ends a swap the channel reports lost, and completes a successful one', () => {
    expect(nextState(facts('ChainFailed', { platformHeld: true }), { type: 'channel_status', outcome: 'FailedNoRefund' })).to.include({ to: 'FailedNoRefund' });
    expect(nextState(facts('Exchanging', { platformHeld: true }), { type: 'channel_status', outcome: 'Completed' })).to.include({ to: 'Completed' });
  });

  it('an order paid to a channel\'s own address is refunded by the channel itself', () => {
    expect(nextState(facts('Exchanging'), { type: 'channel_status', outcome: 'Refunded' })).to.include({ to: 'Refunded' });
  });
});

describe('when the platform sends a refund', () => {
  const failed: RefundReadiness = {
    state: 'SlippageFailed', refundAddress: '0xabc', received: 100n, executionRecorded: true, forwarded: false, channelReturned: false, resolution: null,
  };
  it('a failed swap never forwarded, with a refund address and its execution recorded', () => {
    for (const state of ['ChainFailed', 'SlippageFailed', 'RefundAddressPending'] as const) expect(refundReady({ ...failed, state }), state).to.deep.equal({ ready: true });
  });

  it('a forwarded one only once the channel gave the principal back', () => {
    expect(refundReady({ ...failed, state: 'ChainFailed', forwarded: true })).to.deep.equal({ ready: false, reason: 'principal_with_channel' });
    expect(refundReady({ ...failed, state: 'ChainFailed', forwarded: true, channelReturned: true })).to.deep.equal({ ready: true });
  });

  it('not without a refund address, a deposit or recorded execution details', () => {
    expect(refundReady({ ...failed, refundAddress: null })).to.deep.equal({ ready: false, reason: 'no_refund_address' });
    expect(refundReady({ ...failed, received: null })).to.deep.equal({ ready: false, reason: 'nothing_deposited' });
    expect(refundReady({ ...failed, executionRecorded: false })).to.deep.equal({ ready: false, reason: 'execution_not_recorded' });
  });

  it('a ManualReview order only when an operator resolved it as a refund; never a finished or running one', () => {
    expect(refundReady({ ...failed, state: 'ManualReview', executionRecorded: false })).to.deep.equal({ ready: false, reason: 'not_refundable' });
    expect(refundReady({ ...failed, state: 'ManualReview', executionRecorded: false, resolution: 'refund' })).to.deep.equal({ ready: true });
    expect(refundReady({ ...failed, state: 'ManualReview', resolution: 'execute' })).to.deep.equal({ ready: false, reason: 'not_refundable' });
    for (const state of ['Completed', 'Settled', 'Refunded', 'Exchanging', 'Depositing', 'FailedNoRefund'] as const) {
      expect(refundReady({ ...failed, state }), state).to.deep.equal({ ready: false, reason: 'not_refundable' });
    }
  });
});

describe('a deposit to an order already in ManualReview', () => {
  const at = new Date('2026-01-01T01:00:00Z');
  it('is recorded when none was (an expired order whose refund request came first), once', () => {
    expect(nextState(facts('ManualReview', { received: null }), { type: 'deposit', amount: 5n, at })).to.deep.equal({ kind: 'moved', to: 'ManualReview', commission: false });
    expect(nextState(facts('ManualReview', { received: 5n }), { type: 'deposit', amount: 5n, at }).kind).to.equal('unchanged');
    expect(nextState(facts('ManualReview', { received: null, resolution: 'refund' }), { type: 'deposit', amount: 5n, at }).kind).to.equal('unchanged');
  });
});
