import type { IncomingMessage, ServerResponse } from 'node:http';
import { expect } from 'chai';
import { answerJson, rejectionOf, startHttpStub, type HttpStub } from '@chainpipe/testing';
import { AmountBelowProviderMinimum, ChangeNowAdapter, ProviderError, ThorchainAdapter, type TokenRef } from '../src';

/**
 * The adapters reading the providers' minimums from answers shaped as the providers document
 * them: THORNode's quote field `recommended_min_amount_in` and its code-3 refusal (the example of
 * THORChain's developer docs: ETH.ETH, amount 1000), ChangeNOW's `deposit_too_small` with the
 * pair's `/v2/exchange/range`.
 */
const ETH: TokenRef = { id: 101, symbol: 'ETH', decimals: 18, chainId: 1, contractAddress: null };
const USDT: TokenRef = { id: 102, symbol: 'USDT', decimals: 6, chainId: 1, contractAddress: '0xdac17f958d2ee523a2206206994597c13d831ec7' };
const BTC: TokenRef = { id: 1001, symbol: 'BTC', decimals: 8, chainId: 10, contractAddress: null };
const signal = () => AbortSignal.timeout(5000);
type Handler = (req: IncomingMessage, res: ServerResponse) => void;

describe('provider minimums and THORChain routers in the channel adapters', () => {
  let stub: HttpStub;
  let thornode: Handler = () => undefined;
  let estimate: Handler = () => undefined;
  let exchange: Handler = () => undefined;
  let range: Handler = () => undefined;
  const quote = (over: Record<string, unknown>) => ({
    inbound_address: '0x88e9d0d3c1ba6c8c9c7a8b0b0c7e8b3e2c1f5a11', expiry: 1_900_000_000, expected_amount_out: '398600', recommended_min_amount_in: '17895', memo: '=:BTC.BTC:bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4', ...over,
  });

  before(async () => {
    stub = await startHttpStub({
      '/thornode/thorchain/quote/swap': (req, res) => thornode(req, res),
      '/cn/v2/exchange/estimated-amount': (req, res) => estimate(req, res),
      '/cn/v2/exchange': (req, res) => exchange(req, res),
      '/cn/v2/exchange/range': (req, res) => range(req, res),
    });
  });
  after(() => stub.close());

  const thor = () => new ThorchainAdapter({ baseUrl: `${stub.url}/thornode`, clientId: '', timeoutMs: 2000 });
  const changenow = () => new ChangeNowAdapter({ baseUrl: `${stub.url}/cn`, apiKey: 'k', timeoutMs: 2000, depositWindowMs: 60_000 });

  it('THORNode\'s code-3 refusal names the minimum in 1e8 units: the adapter gives it in the source unit', async () => {
    thornode = (_req, res) => answerJson(res, 400, { code: 3, message: 'amount less than min swap amount (recommended_min_amount_in: 17895): invalid request', details: [] });
    const err = await rejectionOf(thor().quote({ src: ETH, dst: BTC, amountIn: 10_000_000_000_000n, signal: signal() }), AmountBelowProviderMinimum);
    expect(err.minAmountIn).to.equal(178_950_000_000_000n);
    thornode = (_req, res) => answerJson(res, 400, { code: 3, message: 'amount less than dust threshold: invalid request', details: [] });
    expect((await rejectionOf(thor().quote({ src: ETH, dst: BTC, amountIn: 1n, signal: signal() }), AmountBelowProviderMinimum)).minAmountIn).to.equal(undefined);
    // any other refusal stays a provider failure
    thornode = (_req, res) => answerJson(res, 400, { code: 3, message: 'trading is halted: invalid request', details: [] });
    const other = await rejectionOf(thor().quote({ src: ETH, dst: BTC, amountIn: 1n, signal: signal() }), ProviderError);
    expect(other).to.not.be.instanceOf(AmountBelowProviderMinimum);
  });

  it('a THORChain quote under its recommended_min_amount_in is refused; at it, accepted', async () => {
    thornode = (_req, res) => answerJson(res, 200, quote({}));
    const err = await rejectionOf(thor().quote({ src: ETH, dst: BTC, amountIn: 178_949_999_999_999n, signal: signal() }), AmountBelowProviderMinimum);
    expect(err.minAmountIn).to.equal(178_950_000_000_000n);
    expect((await thor().quote({ src: ETH, dst: BTC, amountIn: 178_950_000_000_000n, signal: signal() })).amountOut).to.equal(398_600n);
  });

  it('THORChain deposits keep the quote\'s router; a token source without one is refused', async () => {
    const router = '0xd37bbe5744d730a1d98d8dc97c42f0ca46ad7146';
    thornode = (_req, res) => answerJson(res, 200, quote({ router, recommended_min_amount_in: '1000' }));
    const deposit = await thor().createDeposit({ src: USDT, dst: BTC, amountIn: 100_000_000n, dstAddress: 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4' });
    expect(deposit).to.include({ router, depositAddress: '0x88e9d0d3c1ba6c8c9c7a8b0b0c7e8b3e2c1f5a11' });
    thornode = (_req, res) => answerJson(res, 200, quote({ recommended_min_amount_in: '1000' }));
    await rejectionOf(thor().createDeposit({ src: USDT, dst: BTC, amountIn: 100_000_000n, dstAddress: 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4' }), ProviderError);
  });

  it('ChangeNOW\'s deposit_too_small: the range gives the minimum, rounded up to the source unit', async () => {
    const tooSmall: Handler = (_req, res) => answerJson(res, 400, { error: 'deposit_too_small', message: 'Amount is less than minimal: 0.0075 ETH' });
    estimate = tooSmall;
    exchange = tooSmall;
    range = (_req, res) => answerJson(res, 200, { fromCurrency: 'eth', fromNetwork: 'eth', toCurrency: 'btc', toNetwork: 'btc', flow: 'fixed-rate', minAmount: 0.0075, maxAmount: null });
    const err = await rejectionOf(changenow().quote({ src: ETH, dst: BTC, amountIn: 7_000_000_000_000_000n, signal: signal() }), AmountBelowProviderMinimum);
    expect(err.minAmountIn).to.equal(7_500_000_000_000_000n);
    const atCreation = await rejectionOf(changenow().createDeposit({ src: ETH, dst: BTC, amountIn: 7_000_000_000_000_000n, dstAddress: 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4' }), AmountBelowProviderMinimum);
    expect(atCreation.minAmountIn).to.equal(7_500_000_000_000_000n);
    const rangeAsked = stub.received.filter((r) => r.url.startsWith('/cn/v2/exchange/range'));
    expect(rangeAsked.at(-1)!.url).to.equal('/cn/v2/exchange/range?fromCurrency=eth&toCurrency=btc&fromNetwork=eth&toNetwork=btc&flow=fixed-rate');
  });

  it('a ChangeNOW 400 for an amount within the range stays the provider\'s failure', async () => {
    estimate = (_req, res) => answerJson(res, 400, { error: 'pair_is_inactive', message: 'pair eth_btc is inactive' });
    range = (_req, res) => answerJson(res, 200, { fromCurrency: 'eth', fromNetwork: 'eth', toCurrency: 'btc', toNetwork: 'btc', flow: 'fixed-rate', minAmount: 0.0075, maxAmount: null });
    const err = await rejectionOf(changenow().quote({ src: ETH, dst: BTC, amountIn: 10n ** 17n, signal: signal() }), ProviderError);
    expect(err).to.not.be.instanceOf(AmountBelowProviderMinimum);
    expect(err.message).to.contain('pair eth_btc is inactive');
  });
});
