import { expect } from 'chai';
import { belowProviderMinimum, checkRequote, decideClientOrderRepeat, minOutForSlippage, orderIdentityText, parseDecimal, worthAtLeast, type OrderIdentity } from '../src';

const identity = (over: Partial<OrderIdentity> = {}): OrderIdentity => ({
  srcTokenId: 101,
  dstTokenId: 1001,
  amountIn: 1_000_000_000_000_000_000n,
  dstAddress: 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4',
  channelId: 2,
  ...over,
});

describe('integrator order creation: decisions without I/O', () => {
  it('a repeated client_order_id with the same identity is the existing order; any other term is the duplicate error', () => {
    expect(decideClientOrderRepeat(identity(), identity())).to.equal('existing_order');
    for (const other of [
      { srcTokenId: 102 },
      { dstTokenId: 1002 },
      { amountIn: 1_000_000_000_000_000_001n },
      { dstAddress: 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq' },
      { channelId: 1 },
    ]) {
      expect(decideClientOrderRepeat(identity(), identity(other)), JSON.stringify(other, (_k, v) => (typeof v === 'bigint' ? String(v) : v))).to.equal('duplicate_client_order_id');
    }
  });

  it('the identity text names each identity field and nothing of the quote', () => {
    expect(orderIdentityText(identity())).to.equal('[101,1001,"1000000000000000000","bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4",2]');
  });

  it('minimum amount in USD, exactly: 0.004 ETH at 2500 USD is 10 USD', () => {
    const price = parseDecimal('2500')!;
    const ten = parseDecimal('10')!;
    expect(worthAtLeast(4_000_000_000_000_000n, 18, price, ten)).to.equal(true);
    expect(worthAtLeast(3_999_999_999_999_999n, 18, price, ten)).to.equal(false);
    // 6 decimals at 0.9999 USD: 10.001001 USDT is worth 10.0000009 USD, 10.001000 only 9.9999999
    expect(worthAtLeast(10_001_001n, 6, parseDecimal('0.9999')!, ten)).to.equal(true);
    expect(worthAtLeast(10_001_000n, 6, parseDecimal('0.9999')!, ten)).to.equal(false);
  });

  it('the provider minimum: below it refused, at it accepted, none known accepted', () => {
    expect(belowProviderMinimum(99n, 100n)).to.equal(true);
    expect(belowProviderMinimum(100n, 100n)).to.equal(false);
    expect(belowProviderMinimum(1n, undefined)).to.equal(false);
  });

  it('an order must be able to succeed at its own quote: a minimum above the re-quote after commission is refused (1 % key, 0.5 % slippage)', () => {
    const amount = 100_000_000_000_000_000n;
    const requote = 396_806n; // the channel's estimate for amount, after the platform fee
    const commission = amount / 100n; // a 1 % key
    const after = (requote * 99n) / 100n; // 392837: what the forward's fresh quote of the net amount gives
    // quoted without the key: the estimate before commission, its 0.5 % minimum above what the order can get
    const noKeyMin = minOutForSlippage(requote, 0.005); // 394821
    expect(checkRequote({ estimatedOut: requote, minOut: noKeyMin }, requote, amount, commission, 100)).to.deep.equal({ ok: false, msg: 'min_acceptable_out_amount above the estimate after commission' });
    // quoted with the key: the estimate after commission, its minimum reachable
    expect(checkRequote({ estimatedOut: after, minOut: minOutForSlippage(after, 0.005) }, requote, amount, commission, 100)).to.deep.equal({ ok: true, estimatedOut: after });
    // the minimum may equal the order's estimate, not exceed it by one unit
    expect(checkRequote({ estimatedOut: after, minOut: after }, requote, amount, commission, 100).ok).to.equal(true);
    expect(checkRequote({ estimatedOut: after, minOut: after + 1n }, requote, amount, commission, 100).ok).to.equal(false);
    // without a key both figures are the re-quote
    expect(checkRequote({ estimatedOut: requote, minOut: noKeyMin }, requote, amount, 0n, 100)).to.deep.equal({ ok: true, estimatedOut: requote });
  });

  it('quote amount mismatch: the submitted estimate within the threshold of neither the re-quote nor the re-quote after commission', () => {
    const amount = 1_000_000n;
    const requote = 1_000_000n;
    const commission = 100_000n; // a 10 % key: the two figures 10 % apart
    expect(checkRequote({ estimatedOut: 900_000n, minOut: 1n }, requote, amount, commission, 100).ok, 'the figure after commission').to.equal(true);
    expect(checkRequote({ estimatedOut: 1_005_000n, minOut: 1n }, requote, amount, commission, 100).ok, 'the figure before commission, within 1 %').to.equal(true);
    expect(checkRequote({ estimatedOut: 950_000n, minOut: 1n }, requote, amount, commission, 100)).to.deep.equal({ ok: false, msg: 'quote amount mismatch' });
    expect(checkRequote({ estimatedOut: 1_020_000n, minOut: 1n }, requote, amount, commission, 100)).to.deep.equal({ ok: false, msg: 'quote amount mismatch' });
  });
});
