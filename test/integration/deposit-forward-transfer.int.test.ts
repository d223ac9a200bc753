import { expect } from 'chai';
import { hexToString, parseEther } from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import { EvmSender, MnemonicSigner, memoCalldata } from '@chainpipe/custody';
import { ThorchainAdapter } from '@chainpipe/aggregator';
import { netToForward, thorchainLimitMemo } from '@chainpipe/orders';
import { freePort, simChain, spawnTs, stopProcess, TEST_KEY_MNEMONIC, waitReady, type RunningProcess } from '@chainpipe/testing';

/**
 * The forward's transaction on the simulator's chain: a deposit address of the platform (a key
 * index of the test mnemonic), paid by a funded development account, sends exactly the net
 * amount (received − fee_platform − fee_integrator) with THORChain's limit memo to the vault
 * that /thorchain/inbound_addresses names, signed through the Signer; the fees stay behind.
 */
describe('a deposit address forwards its net amount on the simulated chain, signed by the Signer', function () {
  this.timeout(120_000);
  const payer = mnemonicToAccount(TEST_KEY_MNEMONIC, { addressIndex: 11 });
  const signer = new MnemonicSigner(TEST_KEY_MNEMONIC);
  const DEPOSIT_INDEX = 4242;
  let sim: RunningProcess;
  let base = '';

  const { rpc, mined, pay } = simChain(() => base);
  const thorchain = () => new ThorchainAdapter({ baseUrl: `${base}/thornode`, clientId: '', timeoutMs: 5000 });

  before(async () => {
    const [port, ops] = await Promise.all([freePort(), freePort()]);
    base = `http://127.0.0.1:${port}`;
    sim = spawnTs('apps/upstream-sim/src/main.ts', { PORT: String(port), OPS_PORT: String(ops), LOG_LEVEL: 'warn', SIM_BLOCK_MS: '300', SIM_FUNDED_ACCOUNTS: payer.address });
    await waitReady(sim, ops, 60_000);
  });
  after(async () => expect(await stopProcess(sim), 'clean exit').to.equal(0));

  it('sends amount_in − fee_platform − fee_integrator to the current vault with the memo; the fees stay at the deposit address', async () => {
    const deposit = { index: DEPOSIT_INDEX, address: await signer.addressAt('evm', DEPOSIT_INDEX) };
    // the order's terms (source units, wei)
    const amountIn = parseEther('0.5');
    const feePlatform = 1_500_000_000_000_000n;
    const feeIntegrator = 1_250_000_000_000_000n;

    // the user pays the deposit address
    await pay(payer, deposit.address, amountIn);

    const eth = await thorchain().inboundAddress(1);
    const memo = thorchainLimitMemo('BTC.BTC', 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4', 1_234_567n, 8);

    const sender = new EvmSender({ url: `${base}/rpc/ethereum-mainnet`, chainId: 1, timeoutMs: 5000 }, signer);
    const before = await sender.balanceOf(deposit.address);
    const net = netToForward(amountIn, feePlatform, feeIntegrator);
    const data = memoCalldata(memo);
    const plan = await sender.feePlan(deposit.address, eth.address, data);
    const hash = await sender.send(deposit, eth.address, net, plan, data);
    await mined(hash);

    const tx = await rpc('eth_getTransactionByHash', [hash]);
    expect(tx.from).to.equal(deposit.address);
    expect(tx.to).to.equal(eth.address.toLowerCase());
    expect(BigInt(tx.value)).to.equal(amountIn - feePlatform - feeIntegrator);
    expect(hexToString(tx.input)).to.equal('=:BTC.BTC:bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4:1234567');
    const receipt = await rpc('eth_getTransactionReceipt', [hash]);
    const networkFee = BigInt(receipt.gasUsed) * BigInt(receipt.effectiveGasPrice);
    expect(await sender.balanceOf(deposit.address), 'the fees and the rest of the deposit stay').to.equal(before - net - networkFee);
  });

  it("the vault is read fresh each time, and a halted chain gives none (no forward to it)", async () => {
    const halt = (halted: boolean) => fetch(`${base}/sim/thorchain/halt/ETH`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ halted }) });
    const vault = await thorchain().inboundAddress(1);
    expect(vault.address).to.match(/^0x[0-9a-f]{40}$/);
    expect(vault.router).to.match(/^0x[0-9a-f]{40}$/);
    expect((await thorchain().inboundAddress(10)).address).to.match(/^bc1/);
    await halt(true);
    try {
      let refused: Error | undefined;
      await thorchain().inboundAddress(1).catch((err: Error) => (refused = err));
      expect(refused?.message).to.equal('thorchain: ETH is halted or its trading paused');
    } finally {
      await halt(false);
    }
    expect(await thorchain().inboundAddress(1)).to.deep.equal(vault);
    let unknown: Error | undefined;
    await thorchain().inboundAddress(8).catch((err: Error) => (unknown = err));
    expect(unknown?.message).to.match(/no THORChain chain for chain 8/);
  });
});
