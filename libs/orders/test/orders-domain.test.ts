import { expect } from 'chai';
import { feeRateString, nextState, parseFeeRatePercent, splitFees, type OrderFacts } from '../src';

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

  it('channel status moves an exchanging order to each terminal outcome', () => {
    for (const outcome of ['Completed', 'ChainFailed', 'SlippageFailed', 'Refunded', 'FailedNoRefund'] as const) {
      expect(nextState(order('Exchanging'), { type: 'channel_status', outcome })).to.include({ to: outcome });
    }
    expect(nextState(order('Depositing'), { type: 'channel_status', outcome: 'Completed' }).kind).to.equal('unchanged');
  });

  it('settlement earns commission only after a successful swap and is not repeated', () => {
    expect(nextState(order('Completed'), { type: 'settle' })).to.deep.equal({ kind: 'moved', to: 'Settled', commission: true });
    expect(nextState(order('SlippageFailed'), { type: 'settle' })).to.deep.equal({ kind: 'moved', to: 'Settled', commission: false });
    expect(nextState(order('CancelledNoDeposit'), { type: 'settle' })).to.deep.equal({ kind: 'moved', to: 'Settled', commission: false });
    expect(nextState(order('Settled'), { type: 'settle' }).kind).to.equal('unchanged');
    expect(nextState(order('Exchanging'), { type: 'settle' }).kind).to.equal('unchanged');
  });

  it('a replayed deposit after the exchange started changes nothing', () => {
    expect(nextState(order('Exchanging'), { type: 'deposit', amount: 100_000n, at: before }).kind).to.equal('unchanged');
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

  it('takes the commission out of the platform fee, rounded down, in integers', () => {
    // 0.30 % of 123456789 = 370370.367 → 370370; platform fee 1 % = 1234567
    expect(splitFees(123_456_789n, 1_234_567n, 30)).to.deep.equal({
      fee_platform: '864197', fee_partner: '0', fee_integrator: '370370', fee_platform_original: '1234567',
    });
    // beyond 2^53: no precision lost
    expect(splitFees(10n ** 30n, 10n ** 28n, 100).fee_integrator).to.equal((10n ** 28n).toString());
  });

  it('without a key there is no commission; commission never exceeds the platform fee', () => {
    expect(splitFees(1_000_000n, 5_000n, null)).to.include({ fee_integrator: '0', fee_platform: '5000' });
    expect(splitFees(1_000_000n, 5_000n, 1000)).to.include({ fee_integrator: '5000', fee_platform: '0' });
  });
});
