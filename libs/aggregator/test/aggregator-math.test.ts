import { expect } from 'chai';
import { fromUnits, netQuote, toUnits } from '../src';

describe('amount notation of providers, exact', () => {
  it('whole-token decimals to the smallest unit and back', () => {
    expect(toUnits('0.1', 18)).to.equal(10n ** 17n);
    expect(toUnits(0.00012345, 8)).to.equal(12_345n);
    expect(toUnits('1e-8', 8)).to.equal(1n);
    expect(toUnits('1.123456789', 6), 'rounded down').to.equal(1_123_456n);
    expect(fromUnits(10n ** 17n, 18)).to.equal('0.1');
    expect(fromUnits(12_345n, 8)).to.equal('0.00012345');
    expect(fromUnits(5n * 10n ** 8n, 8)).to.equal('5');
    expect(() => toUnits('-1', 8)).to.throw(RangeError);
  });
});

describe('net quote: channel fee after promo taken from the source amount', () => {
  it('0.3 % of 1 ETH is the platform fee; the output shrinks by the same share', () => {
    // provider: 1 ETH → 5,000,000 sat; fee 0.003 ETH; 0.997 of the output remains
    expect(netQuote(5_000_000n, 10n ** 18n, 0.3, null)).to.deep.equal({ estimatedOut: 4_985_000n, platformFee: 3n * 10n ** 15n, channelFeePct: 0.3 });
  });

  it('a 10 % promo makes 0.3 % into 0.27 %', () => {
    const q = netQuote(5_000_000n, 10n ** 18n, 0.3, 10);
    expect(q.channelFeePct).to.equal(0.27);
    expect(q.platformFee).to.equal(27n * 10n ** 14n);
    // 5,000,000 × 0.9973 = 4,986,500
    expect(q.estimatedOut).to.equal(4_986_500n);
  });

  it('rounds down and never goes below zero', () => {
    expect(netQuote(999n, 3n, 0.3, null)).to.deep.equal({ estimatedOut: 999n, platformFee: 0n, channelFeePct: 0.3 });
    expect(netQuote(0n, 0n, 0.3, null).estimatedOut).to.equal(0n);
  });
});
