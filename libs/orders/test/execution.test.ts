import { expect } from 'chai';
import { THORCHAIN_MEMO_MAX_BYTES, decideForward, netToForward, outcomeForOrder, thorchainLimitMemo } from '../src';

describe('execution decisions without I/O', () => {
  // 0.1 ETH paid; 0.3 % platform fee and a 0.25 % commission on top (the fee reading of docs/decisions.md#d23)
  const paid = { received: 100_000_000_000_000_000n, feePlatform: 300_000_000_000_000n, feeIntegrator: 250_000_000_000_000n, minAcceptableOut: 392_838n };

  it('forwards exactly amount_in − fee_platform − fee_integrator', () => {
    expect(netToForward(paid.received, paid.feePlatform, paid.feeIntegrator)).to.equal(99_450_000_000_000_000n);
    expect(decideForward(paid, 395_000n)).to.deep.equal({ kind: 'forward', net: 99_450_000_000_000_000n, minOut: 392_838n });
  });

  it('a fresh quote under the minimum output is no forward but SlippageFailed; the minimum itself is enough', () => {
    expect(decideForward(paid, 392_837n)).to.deep.equal({ kind: 'slippage_failed', net: 99_450_000_000_000_000n, quotedOut: 392_837n, minOut: 392_838n });
    expect(decideForward(paid, 392_838n).kind).to.equal('forward');
  });

  it('fees that take everything received leave nothing to forward', () => {
    expect(decideForward({ ...paid, received: 550_000_000_000_000n }, 1n)).to.deep.equal({ kind: 'nothing_to_forward', net: 0n });
    expect(netToForward(1n, 300n, 0n)).to.equal(0n);
  });

  it('the THORChain memo carries the minimum in 1e8 units, rounded up', () => {
    // BTC has 8 decimals: the limit is the minimum itself
    expect(thorchainLimitMemo('BTC.BTC', 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4', 392_838n, 8)).to.equal('=:BTC.BTC:bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4:392838');
    // 1.5 ETH + 1 wei minimum (18 decimals): 150000000 and a remainder, rounded up
    expect(thorchainLimitMemo('ETH.ETH', '0x5f2b7a4f0c0b4a3c9c0b9a8e7d6c5b4a39281706', 1_500_000_000_000_000_001n, 18)).to.equal('=:ETH.ETH:0x5f2b7a4f0c0b4a3c9c0b9a8e7d6c5b4a39281706:150000001');
    // 12.5 USDT on a 6-decimal token: 1250000000 in 1e8 units
    expect(thorchainLimitMemo('ETH.USDT-0XDAC17F958D2EE523A2206206994597C13D831EC7', '0x5f2b7a4f0c0b4a3c9c0b9a8e7d6c5b4a39281706', 12_500_000n, 6)).to.match(/:1250000000$/);
  });

  it('a memo over the source chain’s room (Bitcoin’s 80-byte OP_RETURN) names the token by the last three characters of its contract; one that still does not fit is refused', () => {
    const usdt = 'ETH.USDT-0XDAC17F958D2EE523A2206206994597C13D831EC7';
    const dest = '0x5f2b7a4f0c0b4a3c9c0b9a8e7d6c5b4a39281706';
    // in full: 2 + 51 + 1 + 42 + 1 + 10 = 107 bytes, over 80; shortened: 2 + 12 + 1 + 42 + 1 + 10 = 68
    expect(thorchainLimitMemo(usdt, dest, 12_500_000n, 6)).to.have.length(107);
    expect(thorchainLimitMemo(usdt, dest, 12_500_000n, 6, THORCHAIN_MEMO_MAX_BYTES.BTC)).to.equal(`=:ETH.USDT-EC7:${dest}:1250000000`);
    // a native asset fits as it is
    expect(thorchainLimitMemo('ETH.ETH', dest, 10n ** 18n, 18, 80)).to.equal(`=:ETH.ETH:${dest}:100000000`);
    // a destination too long for any abbreviation (a 62-character Taproot address and a long limit)
    expect(() => thorchainLimitMemo(usdt, 'bc1p' + 'q'.repeat(58), 10n ** 30n, 6, 80)).to.throw(RangeError, /does not fit/);
  });

  it("a provider's refund of the platform's forward lands at the deposit address: ChainFailed (refundable), not Refunded", () => {
    expect(outcomeForOrder('Refunded', true)).to.equal('ChainFailed');
    expect(outcomeForOrder('Refunded', false), 'an order paid to the channel directly was refunded to the user').to.equal('Refunded');
    for (const outcome of ['Completed', 'ChainFailed', 'SlippageFailed', 'FailedNoRefund'] as const) expect(outcomeForOrder(outcome, true)).to.equal(outcome);
  });
});
