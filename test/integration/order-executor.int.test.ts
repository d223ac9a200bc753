import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { decodeEventLog, decodeFunctionData, encodeFunctionData, erc20Abi, getAddress, hexToString, parseAbi, parseEther, stringToHex, type Hex } from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import { GAS_STATION_INDEX, MnemonicSigner } from '@chainpipe/custody';
import type { Knex } from '@chainpipe/db';
import { OrderRepository, OutgoingTransferRepository, type NewOrder, type OrderRow, type OutgoingTransferKind } from '@chainpipe/order-store';
import { thorchainLimitMemo } from '@chainpipe/orders';
import { simChain, TEST_KEY_MNEMONIC, waitFor, type TopicCollector } from '@chainpipe/testing';
import { ExecutorStack, nextDepositIndex, paidOrders } from './executor-stack';
import { orderFixture } from './order-fixtures';

/**
 * The order executor on the real stack: Postgres, Kafka (the tracker's event outbox), the
 * simulator as the chain and as THORChain (which watches its vault and router there), the
 * executor and tracker processes. A paid order's net amount leaves its deposit address for the
 * vault with THORChain's limit memo, or through the router for a token; a fresh quote under the
 * minimum forwards nothing; a kill between storing and broadcasting broadcasts the stored forward.
 */
const ETH = 101;
const USDT = 102; // Ethereum, 6 decimals
const BTC = 1001;
const USDT_CONTRACT = '0xdac17f958d2ee523a2206206994597c13d831ec7';
const DEST = 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4';
const ROUTER_ABI = parseAbi([
  'function depositWithExpiry(address vault, address asset, uint256 amount, string memo, uint256 expiration) payable',
  'event Deposit(address indexed to, address indexed asset, uint256 amount, string memo)',
]);

describe('order executor: paid orders forwarded to THORChain from their deposit addresses (real stack)', function () {
  this.timeout(240_000);
  const payer = mnemonicToAccount(TEST_KEY_MNEMONIC, { addressIndex: 17 });
  const signer = new MnemonicSigner(TEST_KEY_MNEMONIC);
  let stack: ExecutorStack;
  let db: Knex;
  let orders: OrderRepository;
  let transfers: OutgoingTransferRepository;
  let events: TopicCollector;
  let base = '';
  let integratorId = '';
  /** The gas station's address: the test key's EVM index 2^31 − 1. */
  let station = '';

  const { rpc, mined, pay: payFrom } = simChain(() => base);
  const pay = (to: string, value: bigint, data?: Hex) => payFrom(payer, to, value, { data, gas: 100_000n });
  const thornode = async (path: string) => (await (await fetch(`${base}/thornode${path}`)).json()) as any;
  /** THORNode's output now for `amount1e8` of `fromAsset` to BTC (sats). */
  const quotedSats = async (fromAsset: string, amount1e8: bigint) => BigInt((await thornode(`/thorchain/quote/swap?from_asset=${fromAsset}&to_asset=BTC.BTC&amount=${amount1e8}`)).expected_amount_out);
  const vault = async () => ((await thornode('/thorchain/inbound_addresses')) as any[]).find((v) => v.chain === 'ETH') as { address: string; router: string };
  /** A paid order (Exchanging, its deposit on the chain) of a fresh deposit index; `pay` makes the deposit. */
  const paidOrder = paidOrders(signer, 'evm', () => orders, () => ({ refund_address: payer.address.toLowerCase() } as Partial<NewOrder>));
  const startExecutor = () => stack.startExecutor();

  before(async () => {
    station = await signer.addressAt('evm', GAS_STATION_INDEX);
    // the payer and the gas station start funded, as `make up` funds them
    stack = new ExecutorStack({ database: 'order_executor', integrator: 'Executor test', funded: `${payer.address},${station}`, confirmations: 'ethereum=2' });
    await stack.start();
    ({ db, events, base, orders, transfers, integratorId } = stack);
  });

  after(async () => {
    expect(await stack?.stop(), 'clean exits').to.deep.equal({ executor: 0, tracker: 0, sim: 0 });
  });

  it('forwards exactly amount_in − fee_platform − fee_integrator to the current vault with the limit memo; THORChain swaps it; Completed, then Settled with the commission', async () => {
    const amountIn = parseEther('0.5');
    const feePlatform = 1_500_000_000_000_000n;
    const feeIntegrator = 1_250_000_000_000_000n;
    const net = amountIn - feePlatform - feeIntegrator;
    const minOut = ((await quotedSats('ETH.ETH', net / 10n ** 10n)) * 9n) / 10n;
    const { order, address } = await paidOrder(
      { src_token_id: ETH, dst_token_id: BTC, amount_in: amountIn.toString(), fee_platform: feePlatform.toString(), fee_integrator: feeIntegrator.toString(), min_acceptable_out: minOut.toString(), integrator_id: integratorId },
      (a) => pay(a, amountIn),
    );

    await waitFor(async () => (await orders.findById(order.id))?.forward_tx_hash ?? undefined, { timeoutMs: 30_000, what: 'the forward recorded on the order' });
    const forwarded = (await orders.findById(order.id))!;
    await mined(forwarded.forward_tx_hash!);
    const tx = await rpc('eth_getTransactionByHash', [forwarded.forward_tx_hash]);
    const eth = await vault();
    expect(tx.from).to.equal(address);
    expect(tx.to).to.equal(eth.address.toLowerCase());
    expect(BigInt(tx.value), 'the net amount, read off the chain').to.equal(amountIn - feePlatform - feeIntegrator);
    expect(hexToString(tx.input)).to.equal(thorchainLimitMemo('BTC.BTC', DEST, minOut, 8));
    const [stored] = await transfers.listByOrder(order.id);
    expect(stored).to.include({ kind: 'forward', tx_hash: forwarded.forward_tx_hash, amount: net.toString(), to_address: eth.address });
    expect(forwarded.execution).to.include({ forward_tx_hash: forwarded.forward_tx_hash, memo: hexToString(tx.input), vault: eth.address, net: net.toString(), min_out: minOut.toString() });

    // THORChain observed the forward on the chain and swapped it; the tracker followed it by the forward's hash
    await waitFor(async () => (await orders.findById(order.id))?.state === 'Settled', { timeoutMs: 30_000, what: 'Completed by the provider, then settled' });
    const audit = (await orders.audit(order.id)).map((a) => [a.event, a.to_state]);
    expect(audit).to.deep.equal([['created', 'Exchanging'], ['forwarded', 'Exchanging'], ['channel_status', 'Completed'], ['settle', 'Settled']]);
    const settled = (await orders.findById(order.id))!;
    expect(settled.payout_tx_hash).to.match(/^[0-9A-F]{64}$/);
    expect(settled.execution).to.include({ outcome: 'Completed', forward_tx_hash: forwarded.forward_tx_hash });
    expect(await orders.ledgerOf(order.id)).to.include({ amount: feeIntegrator.toString(), state: 'Available' });
    // the deposit address held nothing before the user paid: the fees less the forward's gas stay there, to the wei
    const receipt = await rpc('eth_getTransactionReceipt', [forwarded.forward_tx_hash]);
    expect(BigInt(await rpc('eth_getBalance', [address, 'latest']))).to.equal(feePlatform + feeIntegrator - BigInt(receipt.gasUsed) * BigInt(receipt.effectiveGasPrice));

    await waitFor(() => events.messages.some((m) => JSON.parse(m.value!.toString()).order_id === order.id && JSON.parse(m.value!.toString()).event === 'forwarded'), { timeoutMs: 20_000, what: 'the forwarded event on orders.events.v1' });
    const forwardedEvent = events.messages.map((m) => JSON.parse(m.value!.toString())).find((e) => e.order_id === order.id && e.event === 'forwarded');
    expect(forwardedEvent).to.deep.include({ from_state: 'Exchanging', to_state: 'Exchanging' });
    expect(forwardedEvent.detail).to.include({ tx_hash: forwarded.forward_tx_hash, amount: net.toString() });
  });

  it('a ChangeNOW order: a fixed-rate exchange of exactly the net amount, paid from the deposit address; ChangeNOW finishes it; followed by that exchange, Completed, then Settled', async () => {
    const changenow = (await db('agg.channels').where({ adapter_kind: 'changenow' }).first('id')) as { id: number };
    const amountIn = parseEther('0.4');
    const feePlatform = 1_200_000_000_000_000n;
    const feeIntegrator = 800_000_000_000_000n;
    const net = amountIn - feePlatform - feeIntegrator;
    const { order, address } = await paidOrder(
      { channel_id: changenow.id, channel_kind: 'changenow', provider_order_id: `made-with-the-order-${randomBytes(4).toString('hex')}`, src_token_id: ETH, dst_token_id: BTC, amount_in: amountIn.toString(), fee_platform: feePlatform.toString(), fee_integrator: feeIntegrator.toString(), min_acceptable_out: '1', integrator_id: integratorId },
      (a) => pay(a, amountIn),
    );

    await waitFor(async () => (await orders.findById(order.id))?.forward_tx_hash ?? undefined, { timeoutMs: 30_000, what: 'the forward recorded on the order' });
    const forwarded = (await orders.findById(order.id))!;
    await mined(forwarded.forward_tx_hash!);
    const tx = await rpc('eth_getTransactionByHash', [forwarded.forward_tx_hash]);
    const execution = forwarded.execution as Record<string, string>;
    expect(tx.from).to.equal(address);
    expect(tx.to).to.equal(execution.payin_address.toLowerCase());
    expect(BigInt(tx.value), 'the net amount, read off the chain').to.equal(net);
    // the exchange the forward pays is the one the tracker follows, and ChangeNOW knows it for that amount
    expect(forwarded.provider_order_id).to.equal(execution.provider_order_id).and.not.equal(order.provider_order_id);
    const exchange = (await (await fetch(`${base}/changenow/v2/exchange/by-id?id=${execution.provider_order_id}`, { headers: { 'x-changenow-api-key': 'test' } })).json()) as Record<string, unknown>;
    expect(exchange).to.include({ flow: 'fixed-rate', refundAddress: address });
    expect(Number(exchange.expectedAmountFrom)).to.equal(Number(net) / 1e18);

    await waitFor(async () => (await orders.findById(order.id))?.state === 'Settled', { timeoutMs: 30_000, what: 'finished by ChangeNOW, then settled' });
    const audit = (await orders.audit(order.id)).map((a) => [a.event, a.to_state]);
    expect(audit).to.deep.equal([['created', 'Exchanging'], ['forwarded', 'Exchanging'], ['channel_status', 'Completed'], ['settle', 'Settled']]);
  });

  it('a fresh quote under min_acceptable_out_amount forwards nothing: SlippageFailed with the quote recorded; its refund address gets principal − network fee: Refunded', async () => {
    const amountIn = parseEther('0.2');
    const net = amountIn - 600_000_000_000_000n;
    const above = (await quotedSats('ETH.ETH', net / 10n ** 10n)) * 2n;
    const refundTo = '0x' + randomBytes(20).toString('hex');
    const { order, address } = await paidOrder(
      { src_token_id: ETH, dst_token_id: BTC, amount_in: amountIn.toString(), fee_platform: '600000000000000', min_acceptable_out: above.toString(), refund_address: refundTo } as Partial<NewOrder>,
      (a) => pay(a, amountIn),
    );
    // the executor's refund job sends the refund as soon as the order is SlippageFailed with its refund address
    const refunded = await waitFor(async () => {
      const o = (await orders.findById(order.id))!;
      return o.state === 'Refunded' ? o : undefined;
    }, { timeoutMs: 30_000, what: 'SlippageFailed, then Refunded' });
    expect(refunded.forward_tx_hash, 'nothing forwarded').to.equal(null);
    expect(refunded.execution).to.include({ reason: 'slippage_failed', net: net.toString(), min_out: above.toString() });
    expect(BigInt(refunded.execution!.quoted_out as string) < above).to.equal(true);
    expect((await orders.audit(order.id)).map((a) => [a.event, a.to_state])).to.deep.equal([['created', 'Exchanging'], ['forward_refused', 'SlippageFailed'], ['refund_sent', 'Refunded']]);

    // the refund, read off the chain: from the deposit address to the refund address, the principal less its network fee
    const [refund, ...others] = await transfers.listByOrder(order.id);
    expect(others, 'one transfer: the refund').to.deep.equal([]);
    expect(refund).to.include({ kind: 'refund', status: 'confirmed', tx_hash: refunded.refund_tx_hash });
    const tx = await rpc('eth_getTransactionByHash', [refunded.refund_tx_hash]);
    expect(tx.from).to.equal(address);
    expect(tx.to).to.equal(refundTo);
    const networkFee = BigInt(tx.gas) * BigInt(tx.maxFeePerGas);
    expect(BigInt(tx.value), 'principal − network fee').to.equal(amountIn - networkFee);
    expect((await rpc('eth_getTransactionReceipt', [refunded.refund_tx_hash])).status, 'mined').to.equal('0x1');
    const sent = await waitFor(() => events.messages.map((m) => JSON.parse(m.value!.toString())).find((e) => e.order_no === order.order_no && e.event === 'refund_sent'), { timeoutMs: 20_000, what: 'refund_sent event' });
    expect(sent).to.include({ from_state: 'SlippageFailed', to_state: 'Refunded' });
    expect(sent.detail).to.include({ tx_hash: refunded.refund_tx_hash, to: refundTo });
    expect(await orders.ledgerOf(order.id), 'no commission for a failed swap').to.equal(undefined);
  });

  it("THORChain's refund of a forward goes back to the deposit address: the order is ChainFailed (refundable), not Refunded, and earns nothing", async () => {
    const index = nextDepositIndex();
    const forwardHash = '0x' + randomBytes(32).toString('hex');
    const order = await orders.insert(
      orderFixture({ deposit_index: index, deposit_address: await signer.addressAt('evm', index), state: 'Exchanging', integrator_id: integratorId, fee_integrator: '1000' }),
    );
    await db('agg.orders').where({ id: order.id }).update({ deposit_tx_hash: '0x' + randomBytes(32).toString('hex'), deposit_amount: order.amount_in, forward_tx_hash: forwardHash, refund_address: payer.address.toLowerCase() });
    const refundHash = randomBytes(32).toString('hex').toUpperCase();
    await fetch(`${base}/sim/thorchain/tx/${forwardHash}`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ outcome: 'refunded', outHash: refundHash }) });
    await waitFor(async () => (await orders.findById(order.id))?.state === 'ChainFailed', { timeoutMs: 20_000, what: 'ChainFailed after the provider refunded the forward' });
    expect((await orders.findById(order.id))!.execution).to.include({ outcome: 'ChainFailed', provider_outcome: 'Refunded', tx_hash: refundHash });
    expect(await orders.ledgerOf(order.id)).to.equal(undefined);
  });

  it('an ERC-20 source goes through the router: approve(router, net), then depositWithExpiry(vault, token, net, memo, expiry); THORChain swaps it', async () => {
    const amountIn = 250_000_000n; // 250 USDT
    const feePlatform = 750_000n;
    const feeIntegrator = 625_000n;
    const net = amountIn - feePlatform - feeIntegrator;
    const minOut = ((await quotedSats(`ETH.USDT-${USDT_CONTRACT.toUpperCase()}`, net * 100n)) * 9n) / 10n;
    const { order, address } = await paidOrder(
      { src_token_id: USDT, dst_token_id: BTC, amount_in: amountIn.toString(), fee_platform: feePlatform.toString(), fee_integrator: feeIntegrator.toString(), min_acceptable_out: minOut.toString() },
      async (a) => {
        await pay(a, parseEther('0.01')); // gas for the deposit address's two transactions
        return pay(USDT_CONTRACT, 0n, encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [a as Hex, amountIn] }));
      },
    );
    await waitFor(async () => (await orders.findById(order.id))?.forward_tx_hash ?? undefined, { timeoutMs: 30_000, what: 'the router forward recorded' });
    const forwardHash = (await orders.findById(order.id))!.forward_tx_hash!;
    await mined(forwardHash);
    const { address: vaultAddress, router } = await vault();
    const [approve, forward] = await transfers.listByOrder(order.id);
    expect([approve.kind, forward.kind]).to.deep.equal(['approve', 'forward']);

    const approveTx = await rpc('eth_getTransactionByHash', [approve.tx_hash]);
    expect(approveTx.to).to.equal(USDT_CONTRACT);
    expect(decodeFunctionData({ abi: erc20Abi, data: approveTx.input })).to.deep.equal({ functionName: 'approve', args: [getAddress(router), net] });

    const tx = await rpc('eth_getTransactionByHash', [forwardHash]);
    expect(tx.from).to.equal(address);
    expect(tx.to).to.equal(router.toLowerCase());
    expect(BigInt(tx.value)).to.equal(0n);
    const call = decodeFunctionData({ abi: ROUTER_ABI, data: tx.input });
    expect(call.functionName).to.equal('depositWithExpiry');
    const [callVault, asset, amount, memo, expiry] = call.args as [string, string, bigint, string, bigint];
    expect(callVault.toLowerCase()).to.equal(vaultAddress.toLowerCase());
    expect(asset.toLowerCase()).to.equal(USDT_CONTRACT);
    expect(amount, 'the net amount, read off the chain').to.equal(amountIn - feePlatform - feeIntegrator);
    expect(memo).to.equal(thorchainLimitMemo('BTC.BTC', DEST, minOut, 8));
    expect(Number(expiry)).to.be.greaterThan(Math.floor(Date.now() / 1000));
    const receipt = await rpc('eth_getTransactionReceipt', [forwardHash]);
    const deposit = receipt.logs.filter((l: any) => l.address === router.toLowerCase()).map((l: any) => decodeEventLog({ abi: ROUTER_ABI, topics: l.topics, data: l.data }));
    expect(deposit).to.have.length(1);
    expect(deposit[0].args).to.deep.include({ amount: net, memo });

    await waitFor(async () => ['Completed', 'Settled'].includes((await orders.findById(order.id))!.state), { timeoutMs: 30_000, what: 'the token swap completed' });
  });

  it('a halted chain is waited for: no transfer while THORChain halts ETH, the forward once it resumes', async () => {
    const halt = (halted: boolean) => fetch(`${base}/sim/thorchain/halt/ETH`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ halted }) });
    const haltedWaits = async () => {
      const text = await (await fetch(`http://127.0.0.1:${stack.executorOps}/metrics`)).text();
      return Number(/^chainpipe_agg_forward_waits_total\{[^}]*reason="halted"[^}]*\} ([0-9]+)/m.exec(text)?.[1] ?? 0);
    };
    const amountIn = parseEther('0.25');
    const net = amountIn - 750_000_000_000_000n;
    const minOut = ((await quotedSats('ETH.ETH', net / 10n ** 10n)) * 9n) / 10n;
    let order;
    try {
      ({ order } = await paidOrder({ src_token_id: ETH, dst_token_id: BTC, amount_in: amountIn.toString(), fee_platform: '750000000000000', min_acceptable_out: minOut.toString() }, async (a) => {
        const hash = await pay(a, amountIn);
        await halt(true);
        return hash;
      }));
      const before = await haltedWaits();
      // several passes saw the halt (the deposit confirmed, the quote taken before the halt mattered)
      await waitFor(async () => (await haltedWaits()) >= before + 3, { timeoutMs: 30_000, what: 'passes that waited for the halted chain' });
      expect(await transfers.listByOrder(order.id), 'nothing signed for a halted chain').to.deep.equal([]);
      expect((await orders.findById(order.id))!.state).to.equal('Exchanging');
    } finally {
      await halt(false);
    }
    await waitFor(async () => (await orders.findById(order.id))?.forward_tx_hash ?? undefined, { timeoutMs: 30_000, what: 'the forward once the chain resumed' });
    const forwardHash = (await orders.findById(order.id))!.forward_tx_hash!;
    await mined(forwardHash);
    const tx = await rpc('eth_getTransactionByHash', [forwardHash]);
    expect(tx.to).to.equal((await vault()).address.toLowerCase());
    expect(BigInt(tx.value)).to.equal(net);
  });

  it('an executor killed after storing the forward and before any broadcast reached the chain broadcasts the stored transaction after its restart: one forward, its hash', async () => {
    const amountIn = parseEther('0.3');
    const net = amountIn - 900_000_000_000_000n;
    const minOut = ((await quotedSats('ETH.ETH', net / 10n ** 10n)) * 9n) / 10n;
    const { order, address } = await killWhenStored('forward', (refuse) =>
      paidOrder({ src_token_id: ETH, dst_token_id: BTC, amount_in: amountIn.toString(), fee_platform: '900000000000000', min_acceptable_out: minOut.toString() }, async (a) => {
        const hash = await pay(a, amountIn);
        await refuse(); // the node takes nothing from now on: the executor stores the forward, its broadcasts fail
        return hash;
      }),
    );
    const stored = (await transfers.find(order.id, 'forward'))!;
    expect(await rpc('eth_getTransactionByHash', [stored.tx_hash]), 'nothing on the chain before the restart').to.equal(null);
    expect((await orders.findById(order.id))!.forward_tx_hash).to.equal(null);

    await startExecutor();
    await waitFor(async () => (await orders.findById(order.id))?.forward_tx_hash ?? undefined, { timeoutMs: 30_000, what: 'the forward recorded after the restart' });
    expect((await orders.findById(order.id))!.forward_tx_hash, 'the stored transaction, not a new one').to.equal(stored.tx_hash);
    await mined(stored.tx_hash);
    const tx = await rpc('eth_getTransactionByHash', [stored.tx_hash]);
    expect(BigInt(tx.value)).to.equal(net);
    expect(await transfers.listByOrder(order.id)).to.have.length(1);
    expect((await transfers.find(order.id, 'forward'))!.raw_tx).to.equal(stored.raw_tx);
    await waitFor(async () => (await transfers.find(order.id, 'forward'))?.status === 'confirmed', { timeoutMs: 20_000, what: 'the forward confirmed' });
    expect(Number(await rpc('eth_getTransactionCount', [address, 'latest'])), 'one transaction ever left the deposit address').to.equal(1);
  });
  /** A USDT order paid to a deposit address that holds no ether (as on a real chain: only the token arrived). */
  const tokenOrderWithoutGas = async (amountIn: bigint, beforeInsert?: () => Promise<void>) => {
    const feePlatform = 750_000n;
    const net = amountIn - feePlatform;
    const minOut = ((await quotedSats(`ETH.USDT-${USDT_CONTRACT.toUpperCase()}`, net * 100n)) * 9n) / 10n;
    const paid = await paidOrder(
      { src_token_id: USDT, dst_token_id: BTC, amount_in: amountIn.toString(), fee_platform: feePlatform.toString(), fee_integrator: '0', min_acceptable_out: minOut.toString() },
      async (a) => {
        const hash = await pay(USDT_CONTRACT, 0n, encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [a as Hex, amountIn] }));
        // nobody paid it ether: a fresh address holds none, as on a real chain
        expect(BigInt(await rpc('eth_getBalance', [a, 'latest'])), 'no ether at the deposit address').to.equal(0n);
        await beforeInsert?.();
        return hash;
      },
    );
    return { ...paid, net };
  };
  /**
   * Places an order whose deposit is made before `refuse` is called (from then on the node takes
   * no transaction), waits until the executor has stored the order's `kind` transfer unbroadcast,
   * kills the executor, and lets the node take transactions again.
   */
  const killWhenStored = async <T extends { order: OrderRow }>(kind: OutgoingTransferKind, place: (refuse: () => Promise<void>) => Promise<T>): Promise<T> => {
    const refuse = (on: boolean) => fetch(`${base}/sim/chain/ethereum-mainnet/broadcasts`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ refuse: on }) });
    try {
      const placed = await place(async () => void (await refuse(true)));
      await waitFor(async () => (await transfers.find(placed.order.id, kind))?.status === 'signed', { timeoutMs: 30_000, what: `the ${kind} stored, not broadcast` });
      stack.procs.executor.kill('SIGKILL');
      await stack.procs.executor.exited;
      return placed;
    } finally {
      await refuse(false);
    }
  };
  const metric = async (pattern: RegExp) => Number(pattern.exec(await (await fetch(`http://127.0.0.1:${stack.executorOps}/metrics`)).text())?.[1] ?? 0);

  it("a token deposit address without ether: the gas station sends exactly the approve's and the router deposit's network fees, the forward waits for its confirmations, then goes through the router", async () => {
    const topUpWaits = () => metric(/^chainpipe_agg_forward_waits_total\{[^}]*reason="gas_topup"[^}]*\} ([0-9]+)/m);
    const waitsBefore = await topUpWaits();
    const { order, address, net } = await tokenOrderWithoutGas(120_000_000n);
    await waitFor(async () => (await orders.findById(order.id))?.forward_tx_hash ?? undefined, { timeoutMs: 40_000, what: 'the router forward recorded after the top-up' });
    const forwardHash = (await orders.findById(order.id))!.forward_tx_hash!;
    await mined(forwardHash);

    const [topUp, approve, forward, ...more] = await transfers.listByOrder(order.id);
    expect(more).to.deep.equal([]);
    expect([topUp.kind, approve.kind, forward.kind]).to.deep.equal(['gas_topup_forward', 'approve', 'forward']);
    expect(topUp).to.include({ status: 'confirmed', from_address: station, to_address: address, asset: null });
    // read off the chain: the station paid the deposit address what its two transactions may cost at most
    const [topUpTx, approveTx, forwardTx] = await Promise.all([topUp.tx_hash, approve.tx_hash, forwardHash].map((h) => rpc('eth_getTransactionByHash', [h])));
    expect(topUpTx.from).to.equal(station);
    expect(topUpTx.to).to.equal(address);
    const planned = BigInt(approveTx.gas) * BigInt(approveTx.maxFeePerGas) + BigInt(forwardTx.gas) * BigInt(forwardTx.maxFeePerGas);
    expect(BigInt(topUpTx.value), 'gas × fee cap of the approve and the deposit, the address holding nothing').to.equal(planned);
    // what the two transactions did not burn of the top-up stays at the deposit address, to the wei
    const burnt = (await Promise.all([approve.tx_hash, forwardHash].map((h) => rpc('eth_getTransactionReceipt', [h])))).reduce((sum, r) => sum + BigInt(r.gasUsed) * BigInt(r.effectiveGasPrice), 0n);
    expect(BigInt(await rpc('eth_getBalance', [address, 'latest'])), 'the top-up less the gas burnt').to.equal(planned - burnt);
    expect(forwardTx.from).to.equal(address);
    expect(decodeFunctionData({ abi: ROUTER_ABI, data: forwardTx.input }).args[2], 'the net amount through the router').to.equal(net);
    // a node has no estimate of the deposit before the approve is mined (the simulator's either): its limit is fixed
    expect(BigInt(forwardTx.gas), 'the router deposit’s fixed gas limit').to.equal(150_000n);
    // the forward was signed only once the top-up had its confirmations (ethereum=2)
    const topUpBlock = Number((await rpc('eth_getTransactionReceipt', [topUp.tx_hash])).blockNumber);
    expect(Number((await rpc('eth_getTransactionReceipt', [approve.tx_hash])).blockNumber)).to.be.greaterThan(topUpBlock);
    // The pass that sends a top-up usually finds it unconfirmed and counts a wait; on a loaded
    // machine it may have its two confirmations (blocks every 300 ms) by the time that pass reads
    // it back, and the pass goes on to the approve without one. The order of the blocks above is
    // what holds either way.
    expect(await topUpWaits(), 'passes that waited for the top-up').to.be.at.least(waitsBefore);

    // the top-up's hash on the order's events, between the deposit and the forward
    const audit = (await orders.audit(order.id)).map((a) => [a.event, a.from_state, a.to_state, a.detail.tx_hash ?? null]);
    expect(audit).to.deep.equal([['created', null, 'Exchanging', null], ['gas_topup', 'Exchanging', 'Exchanging', topUp.tx_hash], ['forwarded', 'Exchanging', 'Exchanging', forwardHash]]);
    const event = await waitFor(() => events.messages.map((m) => JSON.parse(m.value!.toString())).find((e) => e.order_no === order.order_no && e.event === 'gas_topup'), { timeoutMs: 20_000, what: 'gas_topup event' });
    expect(event.detail).to.deep.equal({ tx_hash: topUp.tx_hash, purpose: 'forward', amount: planned.toString(), from: station, to: address, chain_type: 'ethereum' });
    expect(await metric(/^chainpipe_agg_gas_station_balance\{[^}]*chain_type="ethereum"[^}]*\} ([0-9.e+]+)/m), "the station's balance gauge").to.be.greaterThan(0);
    await waitFor(async () => ['Completed', 'Settled'].includes((await orders.findById(order.id))!.state), { timeoutMs: 30_000, what: 'the token swap completed' });
  });

  it('an executor killed after storing a gas top-up and before its broadcast reached the chain broadcasts the stored top-up after its restart: one top-up, its bytes', async () => {
    const { order } = await killWhenStored('gas_topup_forward', (refuse) => tokenOrderWithoutGas(90_000_000n, refuse));
    const stored = (await transfers.find(order.id, 'gas_topup_forward'))!;
    expect(await rpc('eth_getTransactionByHash', [stored.tx_hash]), 'nothing on the chain before the restart').to.equal(null);
    await startExecutor();
    await waitFor(async () => (await orders.findById(order.id))?.forward_tx_hash ?? undefined, { timeoutMs: 40_000, what: 'the forward after the restart' });
    const after = (await transfers.find(order.id, 'gas_topup_forward'))!;
    expect(after).to.include({ status: 'confirmed', tx_hash: stored.tx_hash, raw_tx: stored.raw_tx });
    expect((await rpc('eth_getTransactionReceipt', [stored.tx_hash])).status, 'the stored top-up mined').to.equal('0x1');
    expect((await transfers.listByOrder(order.id)).map((t) => t.kind)).to.deep.equal(['gas_topup_forward', 'approve', 'forward']);
  });

  it("a vault churned between the quote and the forward: the forward goes to the new vault (read at forward time) and is swapped; a deposit to the retired vault is refunded by THORChain", async () => {
    const amountIn = parseEther('0.3');
    const feePlatform = 900_000_000_000_000n;
    const net = amountIn - feePlatform;
    const quoted = await thornode(`/thorchain/quote/swap?from_asset=ETH.ETH&to_asset=BTC.BTC&amount=${net / 10n ** 10n}&destination=${DEST}`);
    const minOut = (BigInt(quoted.expected_amount_out) * 9n) / 10n;
    const churned = (await (await fetch(`${base}/sim/thorchain/churn`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ chains: ['ETH'] }) })).json()) as { retired: string; address: string }[];
    expect(churned[0].retired, 'the vault of the quote retired').to.equal(quoted.inbound_address);
    const current = (await vault()).address;
    expect(current).to.equal(churned[0].address).and.not.equal(quoted.inbound_address);

    const { order, address } = await paidOrder({ src_token_id: ETH, dst_token_id: BTC, amount_in: amountIn.toString(), fee_platform: feePlatform.toString(), min_acceptable_out: minOut.toString() }, (a) => pay(a, amountIn));
    await waitFor(async () => (await orders.findById(order.id))?.forward_tx_hash ?? undefined, { timeoutMs: 30_000, what: 'the forward recorded' });
    const forwardHash = (await orders.findById(order.id))!.forward_tx_hash!;
    await mined(forwardHash);
    const tx = await rpc('eth_getTransactionByHash', [forwardHash]);
    expect(tx).to.include({ from: address, to: current.toLowerCase() });
    expect(BigInt(tx.value)).to.equal(net);
    expect((await orders.findById(order.id))!.execution).to.include({ vault: current });
    await waitFor(async () => ['Completed', 'Settled'].includes((await orders.findById(order.id))!.state), { timeoutMs: 30_000, what: 'the swap through the new vault completed' });

    // what a sender that kept the quote's vault would have done: THORChain refunds it
    const stale = await pay(quoted.inbound_address, parseEther('0.05'), stringToHex(`=:BTC.BTC:${DEST}:1`));
    const status = await waitFor(async () => {
      const s = await thornode(`/thorchain/tx/status/${stale.slice(2)}`);
      return s.out_txs.length ? s : undefined;
    }, { timeoutMs: 30_000, what: "THORChain's answer to the deposit at the retired vault" });
    expect(status.out_txs[0].memo).to.equal(`REFUND:${stale.slice(2).toUpperCase()}`);
  });

  it('a minimum that rose with gas between the order and its forward: the fresh quote is under recommended_min_amount_in, nothing is forwarded, SlippageFailed (below_provider_minimum) with the new minimum', async () => {
    const setBtcGas = (gas_rate: number) => fetch(`${base}/sim/thorchain/gas/BTC`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ gas_rate }) });
    const amountIn = parseEther('0.02');
    const net = amountIn - 100_000_000_000_000n;
    const before = await thornode(`/thorchain/quote/swap?from_asset=ETH.ETH&to_asset=BTC.BTC&amount=${net / 10n ** 10n}`);
    expect(BigInt(before.recommended_min_amount_in) * 10n ** 10n < net, 'the net amount meets the minimum at the start').to.equal(true);
    let order;
    try {
      ({ order } = await paidOrder({ src_token_id: ETH, dst_token_id: BTC, amount_in: amountIn.toString(), fee_platform: '100000000000000', min_acceptable_out: '1' }, async (a) => {
        const hash = await pay(a, amountIn);
        // Bitcoin's fees twenty times as high before the executor sees the order
        expect((await setBtcGas(200)).status).to.equal(200);
        return hash;
      }));
      const risen = (await (await fetch(`${base}/thornode/thorchain/quote/swap?from_asset=ETH.ETH&to_asset=BTC.BTC&amount=${net / 10n ** 10n}`)).json()) as { message: string };
      const minIn = /recommended_min_amount_in: ([0-9]+)/.exec(risen.message)?.[1];
      expect(minIn, 'THORNode refuses the amount now').to.match(/^[0-9]+$/);
      await waitFor(async () => (await orders.findById(order!.id))?.state === 'SlippageFailed' || undefined, { timeoutMs: 30_000, what: 'the forward refused' });
      const refused = (await orders.findById(order.id))!;
      expect(refused.execution).to.include({ channel: 'thorchain', outcome: 'SlippageFailed', reason: 'below_provider_minimum', net: net.toString() });
      // the minimum THORNode named to the executor: above the net amount, as the one named here (prices move a little between the two quotes)
      const named = BigInt((refused.execution as Record<string, string>).min_amount_in);
      expect(named > net, `minimum ${named} above the net ${net}`).to.equal(true);
      const mine = BigInt(minIn!) * 10n ** 10n;
      expect(named > (mine * 9n) / 10n && named < (mine * 11n) / 10n, `minimum ${named} near ${mine}`).to.equal(true);
      expect(await transfers.find(order.id, 'forward'), 'nothing forwarded').to.equal(undefined);
    } finally {
      await setBtcGas(10);
    }
  });

  it('a ChangeNOW fixed rate that expired before the payin arrived (its broadcast held up by the node): ChangeNOW refunds the payin to the deposit address on the chain; the order is ChainFailed, and once that refund landed the user gets back everything the address holds', async () => {
    const changenow = (await db('agg.channels').where({ adapter_kind: 'changenow' }).first('id')) as { id: number };
    const control = (path: string, body: unknown) => fetch(`${base}${path}`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const amountIn = parseEther('0.3');
    const feePlatform = 900_000_000_000_000n;
    const net = amountIn - feePlatform;
    let placed;
    try {
      // rates valid for 1.5 s; the node takes no transaction until the order's rate has expired
      expect((await control('/sim/changenow/rate-ttl', { ms: 1500 })).status).to.equal(200);
      placed = await paidOrder(
        { channel_id: changenow.id, channel_kind: 'changenow', provider_order_id: `made-with-the-order-${randomBytes(4).toString('hex')}`, src_token_id: ETH, dst_token_id: BTC, amount_in: amountIn.toString(), fee_platform: feePlatform.toString(), min_acceptable_out: '1', integrator_id: integratorId },
        async (a) => {
          const hash = await pay(a, amountIn);
          await mined(hash);
          await control('/sim/chain/ethereum-mainnet/broadcasts', { refuse: true });
          return hash;
        },
      );
      const stored = await waitFor(async () => {
        const t = await transfers.find(placed!.order.id, 'forward');
        return t?.status === 'signed' ? t : undefined;
      }, { timeoutMs: 30_000, what: 'the forward stored, its broadcast refused' });
      const validUntil = Date.parse(String((stored.detail as Record<string, unknown>).rate_valid_until));
      await new Promise((r) => setTimeout(r, Math.max(0, validUntil - Date.now()) + 200));
    } finally {
      await control('/sim/chain/ethereum-mainnet/broadcasts', { refuse: false });
      await control('/sim/changenow/rate-ttl', { ms: 3_600_000 });
    }
    const { order, address } = placed!;
    await waitFor(async () => (await orders.findById(order.id))?.state === 'ChainFailed' || undefined, { timeoutMs: 40_000, what: "ChangeNOW's refund of the late payin followed to ChainFailed" });
    const failed = (await orders.findById(order.id))!;
    expect(failed.execution).to.include({ outcome: 'ChainFailed', provider_outcome: 'Refunded' });
    const exchangeId = failed.provider_order_id;
    const exchange = (await (await fetch(`${base}/changenow/v2/exchange/by-id?id=${exchangeId}`, { headers: { 'x-changenow-api-key': 'test' } })).json()) as Record<string, any>;
    expect(exchange).to.include({ status: 'refunded', flow: 'fixed-rate', refundAddress: address });
    expect(Date.parse(exchange.depositReceivedAt)).to.be.greaterThan(Date.parse(exchange.validUntil));
    await mined(exchange.refundHash);
    const refund = await rpc('eth_getTransactionByHash', [exchange.refundHash]);
    expect(refund).to.include({ from: exchange.payinAddress.toLowerCase(), to: address });
    // the deposit address started empty: the amount paid, less the forward, its gas, plus what came back
    const forwardReceipt = await rpc('eth_getTransactionReceipt', [failed.forward_tx_hash]);
    const forwardGas = BigInt(forwardReceipt.gasUsed) * BigInt(forwardReceipt.effectiveGasPrice);
    const held = amountIn - net - forwardGas + BigInt(refund.value);
    // the refund job waited for ChangeNOW's refund, by its hash, before it sent the user's (D165):
    // everything the address held (less than the deposit), less the refund's network fee, to the refund address
    const refunded = await waitFor(async () => {
      const o = await orders.findById(order.id);
      return o?.state === 'Refunded' ? o : undefined;
    }, { timeoutMs: 30_000, what: 'the refund once the channel\'s refund landed' });
    const row = (await transfers.find(order.id, 'refund'))!;
    expect(row.detail).to.include({ provider_refund_tx_hash: exchange.refundHash.toLowerCase(), provider_refund_amount: BigInt(refund.value).toString(), held: held.toString() });
    const back = await rpc('eth_getTransactionByHash', [refunded.refund_tx_hash]);
    expect(back).to.include({ from: address, to: payer.address.toLowerCase() });
    expect(BigInt(back.value), 'the principal ChangeNOW returned goes back, not the fees alone').to.equal(held - BigInt(String(row.detail.network_fee)));
  });
});
