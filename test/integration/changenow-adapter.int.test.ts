import { expect } from 'chai';
import { parseEther } from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import { AmountBelowProviderMinimum, ChangeNowAdapter, ProviderError, type TokenRef } from '@chainpipe/aggregator';
import { freePort, simChain, spawnTs, stopProcess, TEST_KEY_MNEMONIC, waitFor, waitReady, type RunningProcess } from '@chainpipe/testing';

/**
 * The ChangeNOW adapter against the upstream-sim stand-in of API v2: exchanges on the fixed-rate
 * flow with the rateId of a fixed-rate estimate and the refund address given, the rate's expiry,
 * `deposit_too_small` below the range, amounts as JSON numbers, and statuses that move by
 * themselves after the payin arrives on the simulated chain.
 */
describe('ChangeNOW adapter against the API v2 stand-in', function () {
  this.timeout(120_000);
  const payer = mnemonicToAccount(TEST_KEY_MNEMONIC, { addressIndex: 12 });
  const ETH: TokenRef = { id: 101, symbol: 'ETH', decimals: 18, chainId: 1, contractAddress: null };
  const BTC: TokenRef = { id: 1001, symbol: 'BTC', decimals: 8, chainId: 10, contractAddress: null };
  const DST = 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4';
  const REFUND = '0x' + 'ab'.repeat(20);
  let sim: RunningProcess;
  let base = '';

  const adapter = () => new ChangeNowAdapter({ baseUrl: `${base}/changenow`, apiKey: 'test-key', timeoutMs: 5000, depositWindowMs: 30 * 60_000 });
  const put = (path: string, body: unknown) => fetch(`${base}${path}`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const exchanges = async () => (await (await fetch(`${base}/sim/changenow/exchanges`)).json()) as Record<string, unknown>[];
  const { rpc, pay: payFrom } = simChain(() => base);
  const pay = (to: string, value: bigint) => payFrom(payer, to, value);

  before(async () => {
    const [port, ops] = await Promise.all([freePort(), freePort()]);
    base = `http://127.0.0.1:${port}`;
    sim = spawnTs('apps/upstream-sim/src/main.ts', {
      PORT: String(port), OPS_PORT: String(ops), LOG_LEVEL: 'warn', SIM_BLOCK_MS: '200', SIM_CHANGENOW_STEP_MS: '300', SIM_FUNDED_ACCOUNTS: payer.address,
    });
    await waitReady(sim, ops, 60_000);
  });
  after(async () => expect(await stopProcess(sim), 'clean exit').to.equal(0));
  afterEach(async () => void (await put('/sim/changenow/rate-ttl', { ms: 60 * 60_000 })));

  it('creates the exchange on the fixed-rate flow with its rateId and the refund address; the deposit window ends with the rate', async () => {
    await put('/sim/changenow/rate-ttl', { ms: 10 * 60_000 });
    const before = Date.now();
    const deposit = await adapter().createDeposit({ src: ETH, dst: BTC, amountIn: parseEther('0.1'), dstAddress: DST, refundAddress: REFUND });
    const e = (await exchanges()).find((x) => x.id === deposit.providerOrderId)!;
    expect(e).to.include({ flow: 'fixed-rate', refundAddress: REFUND, payoutAddress: DST, payinAddress: deposit.depositAddress, status: 'waiting' });
    const validUntil = Date.parse(e.validUntil as string);
    expect(validUntil).to.be.greaterThan(before);
    expect(deposit.expireAt.getTime(), 'the rate ends before the 30 min deposit window').to.equal(validUntil);
    expect(deposit.estimatedOut, 'the fixed amount, in satoshis').to.equal(BigInt(Math.round((e.expectedAmountTo as number) * 1e8)));
  });

  it('answers amounts as JSON numbers and a rateId with its validUntil only for a fixed-rate estimate asking for one', async () => {
    const q = (extra: string) => fetch(`${base}/changenow/v2/exchange/estimated-amount?fromCurrency=eth&toCurrency=btc&fromNetwork=eth&toNetwork=btc&fromAmount=0.1&type=direct${extra}`, { headers: { 'x-changenow-api-key': 'k' } }).then((r) => r.json());
    const fixed = (await q('&flow=fixed-rate&useRateId=true')) as Record<string, unknown>;
    expect(fixed.fromAmount).to.be.a('number');
    expect(fixed.toAmount).to.be.a('number');
    expect(fixed.rateId).to.be.a('string').and.not.equal('');
    expect(Date.parse(fixed.validUntil as string)).to.be.greaterThan(Date.now());
    const standard = (await q('&flow=standard')) as Record<string, unknown>;
    expect(standard).to.include({ rateId: null, validUntil: null });
  });

  it('refuses a rateId used after it expired (rate_id_not_found_or_expired)', async () => {
    await put('/sim/changenow/rate-ttl', { ms: 0 });
    let refused: unknown;
    await adapter().createDeposit({ src: ETH, dst: BTC, amountIn: parseEther('0.1'), dstAddress: DST, refundAddress: REFUND }).catch((err) => (refused = err));
    expect(refused).to.be.instanceOf(ProviderError);
    expect((refused as ProviderError).status).to.equal(400);
    expect((refused as Error).message).to.include('Rate id not found or expired');
  });

  it('refuses an amount below the pair range as deposit_too_small, with the minimum read from the range', async () => {
    let refused: unknown;
    await adapter().createDeposit({ src: ETH, dst: BTC, amountIn: 1000n, dstAddress: DST, refundAddress: REFUND }).catch((err) => (refused = err));
    expect(refused).to.be.instanceOf(AmountBelowProviderMinimum);
    expect((refused as AmountBelowProviderMinimum).minAmountIn! > 1000n).to.equal(true);
  });

  it('moves by itself after the payin: waiting → confirming → … → finished with the payout hash', async () => {
    const a = adapter();
    const amount = parseEther('0.1');
    const deposit = await a.createDeposit({ src: ETH, dst: BTC, amountIn: amount, dstAddress: DST, refundAddress: REFUND });
    expect(await a.status(deposit.providerOrderId), 'nothing paid yet').to.deep.equal({ outcome: 'pending' });
    await pay(deposit.depositAddress, amount);
    const seen = new Set<string>();
    const done = await waitFor(
      async () => {
        const e = (await exchanges()).find((x) => x.id === deposit.providerOrderId)!;
        seen.add(e.status as string);
        const s = await a.status(deposit.providerOrderId);
        return s.outcome === 'Completed' ? s : undefined;
      },
      { timeoutMs: 20_000, intervalMs: 100, what: 'exchange finished' },
    );
    expect(done.txHash).to.match(/^0x[0-9a-f]{64}$/);
    expect([...seen].some((s) => ['confirming', 'exchanging', 'sending'].includes(s)), `statuses seen: ${[...seen]}`).to.equal(true);
  });

  it('refunds a fixed-rate payin short of the fixed amount to the refund address, on the chain', async () => {
    const a = adapter();
    const deposit = await a.createDeposit({ src: ETH, dst: BTC, amountIn: parseEther('0.1'), dstAddress: DST, refundAddress: REFUND });
    await pay(deposit.depositAddress, parseEther('0.09'));
    const s = await waitFor(async () => ((await a.status(deposit.providerOrderId)).outcome === 'Refunded' ? a.status(deposit.providerOrderId) : undefined), { timeoutMs: 20_000, intervalMs: 100, what: 'refunded' });
    expect(s.txHash).to.match(/^0x[0-9a-f]{64}$/);
    // the payin went back on the chain from the payin address, less the gas of that transaction
    await waitFor(async () => (await rpc('eth_getTransactionReceipt', [s.txHash]))?.status === '0x1', { timeoutMs: 20_000, what: 'refund mined' });
    const tx = await rpc('eth_getTransactionByHash', [s.txHash]);
    expect(tx).to.include({ from: deposit.depositAddress, to: REFUND });
    const value = parseEther('0.09') - BigInt(tx.gas) * BigInt(tx.maxFeePerGas);
    expect(BigInt(tx.value)).to.equal(value);
    const e = (await exchanges()).find((x) => x.id === deposit.providerOrderId)!;
    expect(e).to.include({ refundAddress: REFUND, refundAmount: Number(value) / 1e18, refundHash: s.txHash });
  });
});
