import { expect } from 'chai';
import { fromThorUnits, minFromThorUnits, thorAsset, toThorUnits, toUnits } from '../src';

describe('THORChain notation', () => {
  it('assets are CHAIN.SYMBOL, tokens with their contract in upper case', () => {
    expect(thorAsset({ id: 101, symbol: 'ETH', decimals: 18, chainId: 1, contractAddress: null })).to.equal('ETH.ETH');
    expect(thorAsset({ id: 102, symbol: 'USDT', decimals: 6, chainId: 1, contractAddress: '0xdac17f958d2ee523a2206206994597c13d831ec7' })).to.equal('ETH.USDT-0XDAC17F958D2EE523A2206206994597C13D831EC7');
    expect(thorAsset({ id: 1001, symbol: 'BTC', decimals: 8, chainId: 10, contractAddress: null })).to.equal('BTC.BTC');
    expect(() => thorAsset({ id: 801, symbol: 'SOL', decimals: 9, chainId: 8, contractAddress: null })).to.throw(/no THORChain chain/);
  });

  it('amounts are 1e8 units for every asset, rounded down', () => {
    expect(toThorUnits(10n ** 17n, 18)).to.equal(10_000_000n); // 0.1 ETH
    expect(toThorUnits(123_456_789_012_345_678n, 18)).to.equal(12_345_678n);
    expect(toThorUnits(2_500_000n, 6)).to.equal(250_000_000n); // 2.5 USDT
    expect(fromThorUnits(398_600n, 8)).to.equal(398_600n);
    expect(fromThorUnits(250_000_000n, 6)).to.equal(2_500_000n);
    expect(fromThorUnits(1n, 18)).to.equal(10n ** 10n);
  });

  it('a minimum in 1e8 units is rounded up into the smallest unit: sending it is enough', () => {
    expect(minFromThorUnits(625_000n, 18)).to.equal(6_250_000_000_000_000n); // 0.00625 ETH, exact
    expect(minFromThorUnits(1_234_567_891n, 6)).to.equal(12_345_679n); // 12.34567891 USDT → 12.345679
    expect(minFromThorUnits(1_234_567_800n, 6)).to.equal(12_345_678n);
  });

  it('a decimal minimum in whole tokens is rounded up, an amount received down', () => {
    expect(toUnits('0.0075', 18, 'up')).to.equal(7_500_000_000_000_000n);
    expect(toUnits('12.3456781', 6, 'up')).to.equal(12_345_679n);
    expect(toUnits('12.3456781', 6)).to.equal(12_345_678n);
  });
});
