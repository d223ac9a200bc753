import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { decodeFunctionData, erc20Abi } from 'viem';
import { tronBase58ToHex, tronHexToBase58 } from '@chainpipe/chains';
import { GasStation, MnemonicSigner, OutgoingTransfers, TronSender, stationKeyOf } from '@chainpipe/custody';
import type { Knex } from '@chainpipe/db';
import { OrderRepository, OutgoingTransferRepository, type NewOrder } from '@chainpipe/order-store';
import { simTron, TEST_KEY_MNEMONIC, waitFor, type TopicCollector } from '@chainpipe/testing';
import { runTreasuryCommand } from '../../apps/admin/src/treasury-commands';
import { ExecutorStack, paidOrders } from './executor-stack';

/**
 * Orders paid on Tron on the real stack: Postgres, Kafka (the tracker's outbox), the simulator
 * as the Tron node (java-tron's HTTP API over a ledger that mines) and as ChangeNOW (THORChain
 * lists no Tron vault: Tron sources go through ChangeNOW), the executor and tracker processes.
 * A TRX order's net amount leaves its deposit address for ChangeNOW's payin address; a refused
 * one goes back to its refund address, less the network fee; a USDT-TRC20 order's net amount
 * leaves by the token's `transfer`, its TRX sent to the deposit address by the gas station first
 * (the station's Tron key, funded as `make up` funds it); a refused one goes back whole, and a
 * settled one's fees are swept the same way. Everything is read off the simulated chain.
 */
const TRX = 901;
const USDT_TRC20 = 902;
const BTC = 1001;
const USDT_CONTRACT = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';
const TRX_SUN = 1_000_000n;

describe('order executor: orders paid on Tron forwarded and refunded from their deposit addresses (real stack)', function () {
  this.timeout(240_000);
  const signer = new MnemonicSigner(TEST_KEY_MNEMONIC);
  const PAYER_INDEX = 17;
  let stack: ExecutorStack;
  let db: Knex;
  let orders: OrderRepository;
  let transfers: OutgoingTransferRepository;
  let events: TopicCollector;
  let base = '';
  let integratorId = '';
  let payer = { index: PAYER_INDEX, address: '' };
  /** The gas station's Tron address: the test key's Tron index 2^31 − 1. */
  let station = '';
  let changenowId = 0;
  /** The TRX order the first test settles: its fees are what the sweep test moves. */
  let settledTrx: { orderNo: string; address: string; fees: bigint } | undefined;

  const tron = simTron(() => base, signer);
  /** A paid order (Exchanging, its deposit mined) of a fresh deposit index on Tron, through ChangeNOW. */
  const paidOrder = paidOrders(signer, 'tvm', () => orders, () => ({
    channel_id: changenowId, channel_kind: 'changenow', provider_order_id: `made-with-the-order-${randomBytes(4).toString('hex')}`, deposit_chain_type: 'tron', refund_address: payer.address, integrator_id: integratorId,
  } as Partial<NewOrder>));
  const tx = async (txId: string) => tron.wallet('gettransactionbyid', { value: txId, visible: true });
  /** The token's balanceOf, run by the node. */
  const usdtOf = async (holder: string) => {
    const answer = await tron.wallet('triggerconstantcontract', { owner_address: holder, contract_address: USDT_CONTRACT, function_selector: 'balanceOf(address)', parameter: tronBase58ToHex(holder)!.slice(2).padStart(64, '0'), visible: true });
    return BigInt(`0x${answer.constant_result[0]}`);
  };
  /** A chain parameter of the node (sun). */
  const chainParameter = async (key: string) => BigInt(((await tron.wallet('getchainparameters', {})).chainParameter as { key: string; value: number }[]).find((p) => p.key === key)!.value);
  /** The TRX an address holds (0 for an account that does not exist). */
  const trxOf = async (address: string) => BigInt((await tron.wallet('getaccount', { address, visible: true })).balance ?? 0);
  /** A gas top-up read off the chain: a TRX transfer from the station to `to`; its amount. */
  const topUpAmount = async (hash: string, to: string) => {
    const sent = await tx(hash);
    const [contract] = sent.raw_data.contract;
    expect(contract.type).to.equal('TransferContract');
    expect(contract.parameter.value).to.include({ owner_address: station, to_address: to });
    expect(sent.ret[0].contractRet).to.equal('SUCCESS');
    return BigInt(contract.parameter.value.amount);
  };
  const metric = async (pattern: RegExp) => Number(pattern.exec(await (await fetch(`http://127.0.0.1:${stack.executorOps}/metrics`)).text())?.[1] ?? 0);

  before(async () => {
    payer = { index: PAYER_INDEX, address: await signer.addressAt('tvm', PAYER_INDEX) };
    station = (await stationKeyOf(signer)).addresses.tvm;
    // the payer and the gas station start funded, as `make up` funds them
    stack = new ExecutorStack({ database: 'order_executor_tron', integrator: 'Tron executor test', funded: '', fundedTron: `${payer.address},${station}`, confirmations: 'tron=2' });
    await stack.start();
    ({ db, events, base, orders, transfers, integratorId } = stack);
    changenowId = ((await db('agg.channels').where({ adapter_kind: 'changenow' }).first('id')) as { id: number }).id;
  });

  after(async () => {
    expect(await stack?.stop(), 'clean exits').to.deep.equal({ executor: 0, tracker: 0, sim: 0 });
  });

  it('a TRX order: exactly received − fee_platform − fee_integrator goes to ChangeNOW’s payin by a TRX transfer; ChangeNOW sees it and finishes; Completed, then Settled', async () => {
    const amountIn = 500n * TRX_SUN;
    const feePlatform = 1_500_000n;
    const feeIntegrator = 1_000_000n;
    const net = amountIn - feePlatform - feeIntegrator;
    const { order, address } = await paidOrder(
      { src_token_id: TRX, dst_token_id: BTC, amount_in: amountIn.toString(), fee_platform: feePlatform.toString(), fee_integrator: feeIntegrator.toString(), min_acceptable_out: '1' },
      (a) => tron.pay(payer, a, amountIn),
    );

    const forwarded = await waitFor(async () => {
      const o = (await orders.findById(order.id))!;
      return o.forward_tx_hash ? o : undefined;
    }, { timeoutMs: 30_000, what: 'the forward recorded on the order' });
    const info = await tron.mined(forwarded.forward_tx_hash!);
    expect(info.result, 'not failed').to.equal(undefined);
    const sent = await tx(forwarded.forward_tx_hash!);
    const execution = forwarded.execution as Record<string, string>;
    const [contract] = sent.raw_data.contract;
    expect(contract.type).to.equal('TransferContract');
    expect(contract.parameter.value).to.deep.equal({ owner_address: address, to_address: execution.payin_address, amount: Number(net) });
    expect(sent.ret[0].contractRet).to.equal('SUCCESS');
    const [stored] = await transfers.listByOrder(order.id);
    expect(stored).to.include({ kind: 'forward', chain_type: 'tron', tx_hash: forwarded.forward_tx_hash, amount: net.toString(), to_address: execution.payin_address, nonce: null });

    // ChangeNOW saw the payin on Tron: the exchange it fixed for the net amount moves on to finished
    const exchange = (await (await fetch(`${base}/changenow/v2/exchange/by-id?id=${execution.provider_order_id}`, { headers: { 'x-changenow-api-key': 'test' } })).json()) as Record<string, unknown>;
    expect(exchange).to.include({ flow: 'fixed-rate', refundAddress: address, fromNetwork: 'trx' });
    expect(Number(exchange.expectedAmountFrom)).to.equal(Number(net) / 1e6);
    await waitFor(async () => (await orders.findById(order.id))?.state === 'Settled', { timeoutMs: 30_000, what: 'finished by ChangeNOW, then settled' });
    expect((await orders.audit(order.id)).map((a) => [a.event, a.to_state])).to.deep.equal([['created', 'Exchanging'], ['forwarded', 'Exchanging'], ['channel_status', 'Completed'], ['settle', 'Settled']]);
    // the fees stay at the deposit address, less what the transfer burnt
    const account = await tron.wallet('getaccount', { address, visible: true });
    expect(BigInt(account.balance)).to.equal(feePlatform + feeIntegrator - BigInt(info.fee ?? 0));
    settledTrx = { orderNo: order.order_no, address, fees: feePlatform + feeIntegrator };

    const event = await waitFor(() => events.messages.map((m) => JSON.parse(m.value!.toString())).find((e) => e.order_id === order.id && e.event === 'forwarded'), { timeoutMs: 20_000, what: 'the forwarded event' });
    expect(event.detail).to.include({ tx_hash: forwarded.forward_tx_hash, amount: net.toString(), chain_type: 'tron' });
  });

  it('a TRX order whose fresh quote is under its minimum: SlippageFailed, nothing forwarded; its refund address gets principal − network fee: Refunded', async () => {
    const amountIn = 300n * TRX_SUN;
    const refundTo = tronHexToBase58('41' + randomBytes(20).toString('hex'))!; // an account that does not exist yet
    const { order, address } = await paidOrder(
      { src_token_id: TRX, dst_token_id: BTC, amount_in: amountIn.toString(), fee_platform: '900000', min_acceptable_out: (10n ** 15n).toString(), refund_address: refundTo } as Partial<NewOrder>,
      (a) => tron.pay(payer, a, amountIn),
    );
    const refunded = await waitFor(async () => {
      const o = (await orders.findById(order.id))!;
      return o.state === 'Refunded' ? o : undefined;
    }, { timeoutMs: 30_000, what: 'SlippageFailed, then Refunded' });
    expect(refunded.forward_tx_hash, 'nothing forwarded').to.equal(null);
    expect(refunded.execution).to.include({ reason: 'slippage_failed' });
    expect((await orders.audit(order.id)).map((a) => [a.event, a.to_state])).to.deep.equal([['created', 'Exchanging'], ['forward_refused', 'SlippageFailed'], ['refund_sent', 'Refunded']]);

    const [refund, ...others] = await transfers.listByOrder(order.id);
    expect(others, 'one transfer: the refund').to.deep.equal([]);
    expect(refund).to.include({ kind: 'refund', status: 'confirmed', tx_hash: refunded.refund_tx_hash });
    const networkFee = BigInt(refund.detail.network_fee as string);
    const sent = await tx(refunded.refund_tx_hash!);
    expect(sent.raw_data.contract[0].parameter.value, 'principal − network fee, from the deposit address').to.deep.equal({ owner_address: address, to_address: refundTo, amount: Number(amountIn - networkFee) });
    const info = await tron.wallet('gettransactioninfobyid', { value: refunded.refund_tx_hash });
    // the planned fee covered what the chain burnt (activating the new account included): the rest stays at the deposit address
    expect(BigInt(info.fee ?? 0) > 0n, 'an activation was paid').to.equal(true);
    expect(BigInt(info.fee ?? 0) <= networkFee).to.equal(true);
    expect(BigInt((await tron.wallet('getaccount', { address: refundTo, visible: true })).balance)).to.equal(amountIn - networkFee);
    const event = await waitFor(() => events.messages.map((m) => JSON.parse(m.value!.toString())).find((e) => e.order_no === order.order_no && e.event === 'refund_sent'), { timeoutMs: 20_000, what: 'refund_sent event' });
    expect(event.detail).to.include({ tx_hash: refunded.refund_tx_hash, to: refundTo });
  });

  it('a USDT-TRC20 order whose deposit address holds no TRX: the gas station sends exactly the planned fee (fee_limit + bandwidth), then the net amount leaves by the token’s transfer(payin, net); the payin holds it', async () => {
    const amountIn = 250_000_000n; // 250 USDT
    const feePlatform = 750_000n;
    const net = amountIn - feePlatform;
    const { order, address } = await paidOrder(
      { src_token_id: USDT_TRC20, dst_token_id: BTC, amount_in: amountIn.toString(), fee_platform: feePlatform.toString(), fee_integrator: '0', min_acceptable_out: '1' },
      (a) => tron.pay(payer, a, amountIn, USDT_CONTRACT),
    );
    expect(await trxOf(address), 'no TRX at the deposit address').to.equal(0n);
    const forwarded = await waitFor(async () => {
      const o = (await orders.findById(order.id))!;
      return o.forward_tx_hash ? o : undefined;
    }, { timeoutMs: 30_000, what: 'the token forward recorded on the order' });
    const info = await tron.mined(forwarded.forward_tx_hash!);
    expect(info.receipt.result).to.equal('SUCCESS');
    const payin = (forwarded.execution as Record<string, string>).payin_address;
    const sent = await tx(forwarded.forward_tx_hash!);
    const [contract] = sent.raw_data.contract;
    expect(contract.type).to.equal('TriggerSmartContract');
    expect(contract.parameter.value).to.include({ owner_address: address, contract_address: USDT_CONTRACT });
    expect(sent.raw_data.fee_limit > 0).to.equal(true);
    const call = decodeFunctionData({ abi: erc20Abi, data: `0x${contract.parameter.value.data}` });
    expect(call.functionName).to.equal('transfer');
    const [recipient, amount] = call.args as [string, bigint];
    expect([recipient.toLowerCase(), amount]).to.deep.equal([`0x${tronBase58ToHex(payin)!.slice(2)}`, net]);
    // the token's balanceOf, run by the node: the payin holds the net amount, the deposit address the fee
    expect(await usdtOf(payin)).to.equal(net);
    expect(await usdtOf(address)).to.equal(feePlatform);
    const [topUp, stored, ...more] = await transfers.listByOrder(order.id);
    expect(more).to.deep.equal([]);
    expect(stored).to.include({ kind: 'forward', asset: USDT_CONTRACT, amount: net.toString(), to_address: USDT_CONTRACT });
    expect(topUp).to.include({ kind: 'gas_topup_forward', status: 'confirmed', chain_type: 'tron', from_address: station, to_address: address, asset: null, nonce: null });

    // read off the chain: the station sent what the forward may burn at most, its fee_limit and its bandwidth (400 bytes planned for a call, D132)
    const planned = BigInt(sent.raw_data.fee_limit) + 400n * (await chainParameter('getTransactionFee'));
    expect(await topUpAmount(topUp.tx_hash, address), 'the planned fee, the address holding nothing').to.equal(planned);
    expect(BigInt(topUp.amount)).to.equal(planned);
    // the forward was signed only once the top-up had its confirmations (tron=2): in a later block
    expect(info.blockNumber).to.be.greaterThan((await tron.mined(topUp.tx_hash)).blockNumber);
    // what the forward burnt came out of the top-up; the rest stays at the deposit address
    expect(BigInt(info.fee ?? 0) > 0n && BigInt(info.fee ?? 0) <= planned).to.equal(true);
    expect(await trxOf(address)).to.equal(planned - BigInt(info.fee ?? 0));

    const audit = (await orders.audit(order.id)).map((a) => [a.event, a.to_state, a.detail.tx_hash ?? null]);
    expect(audit).to.deep.equal([['created', 'Exchanging', null], ['gas_topup', 'Exchanging', topUp.tx_hash], ['forwarded', 'Exchanging', forwarded.forward_tx_hash]]);
    const event = await waitFor(() => events.messages.map((m) => JSON.parse(m.value!.toString())).find((e) => e.order_no === order.order_no && e.event === 'gas_topup'), { timeoutMs: 20_000, what: 'gas_topup event' });
    expect(event.detail).to.deep.equal({ tx_hash: topUp.tx_hash, purpose: 'forward', amount: planned.toString(), from: station, to: address, chain_type: 'tron' });
    expect(await metric(/^chainpipe_agg_gas_station_balance\{[^}]*chain_type="tron"[^}]*\} ([0-9.e+]+)/m), "the station's Tron balance on the gauge").to.be.greaterThan(0);
  });

  it('a USDT-TRC20 order whose fresh quote is under its minimum: SlippageFailed; the station tops up the refund’s fee, and the principal goes back whole by the token’s transfer: Refunded', async () => {
    const amountIn = 80_000_000n; // 80 USDT
    const refundTo = tronHexToBase58('41' + randomBytes(20).toString('hex'))!;
    const { order, address } = await paidOrder(
      { src_token_id: USDT_TRC20, dst_token_id: BTC, amount_in: amountIn.toString(), fee_platform: '240000', fee_integrator: '0', min_acceptable_out: (10n ** 15n).toString(), refund_address: refundTo } as Partial<NewOrder>,
      (a) => tron.pay(payer, a, amountIn, USDT_CONTRACT),
    );
    const refunded = await waitFor(async () => {
      const o = (await orders.findById(order.id))!;
      return o.state === 'Refunded' ? o : undefined;
    }, { timeoutMs: 40_000, what: 'SlippageFailed, topped up, then Refunded' });
    expect(refunded.forward_tx_hash, 'nothing forwarded').to.equal(null);
    const [topUp, refund, ...more] = await transfers.listByOrder(order.id);
    expect(more).to.deep.equal([]);
    expect(topUp).to.include({ kind: 'gas_topup_refund', status: 'confirmed', from_address: station, to_address: address });
    expect(refund).to.include({ kind: 'refund', status: 'confirmed', tx_hash: refunded.refund_tx_hash, asset: USDT_CONTRACT, amount: amountIn.toString() });

    // read off the chain: the token's transfer(refund address, the whole principal), from the deposit address
    const sent = await tx(refunded.refund_tx_hash!);
    const [contract] = sent.raw_data.contract;
    expect(contract.type).to.equal('TriggerSmartContract');
    expect(contract.parameter.value).to.include({ owner_address: address, contract_address: USDT_CONTRACT });
    const call = decodeFunctionData({ abi: erc20Abi, data: `0x${contract.parameter.value.data}` });
    expect([call.functionName, ...(call.args as [string, bigint]).map((a) => (typeof a === 'string' ? a.toLowerCase() : a))]).to.deep.equal(['transfer', `0x${tronBase58ToHex(refundTo)!.slice(2)}`, amountIn]);
    expect(await usdtOf(refundTo), 'the principal, whole').to.equal(amountIn);
    expect(await usdtOf(address)).to.equal(0n);
    // the TRX for it was the station's: what the refund may burn at most
    const planned = BigInt(sent.raw_data.fee_limit) + 400n * (await chainParameter('getTransactionFee'));
    expect(await topUpAmount(topUp.tx_hash, address)).to.equal(planned);
    expect((await orders.audit(order.id)).map((a) => [a.event, a.to_state])).to.deep.equal([['created', 'Exchanging'], ['forward_refused', 'SlippageFailed'], ['gas_topup', 'SlippageFailed'], ['refund_sent', 'Refunded']]);
  });

  it('treasury:sweep moves a settled Tron order’s fees to TREASURY_ADDRESS_TVM, less the network fee, once', async () => {
    expect(settledTrx, 'the TRX order of the first test settled').to.not.equal(undefined);
    const { orderNo, address } = settledTrx!;
    const treasury = tronHexToBase58('41' + randomBytes(20).toString('hex'))!;
    const sender = new TronSender({ url: `${base}/rpc/tron-mainnet`, timeoutMs: 10_000 }, signer);
    const transfersOut = new OutgoingTransfers({ store: transfers, chain: (ct) => (ct === 'tron' ? sender : undefined), confirmations: () => 1 });
    const deps = { db, transfers: transfersOut, chains: (ct: string) => (ct === 'tron' ? sender : undefined), treasuryEvm: '0x' + '11'.repeat(20), treasuryTvm: treasury };
    const held = BigInt((await tron.wallet('getaccount', { address, visible: true })).balance);
    const lines: string[] = [];
    expect(await runTreasuryCommand(['treasury:sweep', '--order', orderNo], deps, { out: (l) => lines.push(l) })).to.equal(0);
    const order = await db('agg.orders').where({ order_no: orderNo }).first('id');
    const sweep = (await transfers.listByOrder(order.id)).find((t) => t.kind === 'sweep')!;
    expect(sweep).to.include({ chain_type: 'tron', to_address: treasury, from_address: address });
    const info = await tron.mined(sweep.tx_hash);
    const sent = await tx(sweep.tx_hash);
    const networkFee = BigInt(sweep.detail.network_fee as string);
    // what it held (the fees, less the forward's burn) less the planned network fee, read off the chain
    expect(sent.raw_data.contract[0].parameter.value).to.deep.equal({ owner_address: address, to_address: treasury, amount: Number(held - networkFee) });
    expect(BigInt(info.fee ?? 0) <= networkFee).to.equal(true);
    expect(BigInt((await tron.wallet('getaccount', { address: treasury, visible: true })).balance)).to.equal(held - networkFee);
    // a second run shows the stored sweep, sends nothing new
    const again: string[] = [];
    await runTreasuryCommand(['treasury:sweep', '--order', orderNo], deps, { out: (l) => again.push(l) });
    expect(again[0]).to.include('already sent').and.include(sweep.tx_hash);
  });

  it('treasury:sweep of a completed USDT-TRC20 order’s fees: the first run has the station top up the transfer’s fee, a later one sends the fees whole to TREASURY_ADDRESS_TVM by the token’s transfer', async () => {
    const feePlatform = 600_000n;
    const feeIntegrator = 150_000n;
    const fees = feePlatform + feeIntegrator;
    // as after a forward: the fees left at the deposit address, no TRX
    const { order, address } = await paidOrder(
      { src_token_id: USDT_TRC20, dst_token_id: BTC, amount_in: '200000000', fee_platform: feePlatform.toString(), fee_integrator: feeIntegrator.toString(), min_acceptable_out: '1', state: 'Completed' } as Partial<NewOrder>,
      (a) => tron.pay(payer, a, fees, USDT_CONTRACT),
    );
    const treasury = tronHexToBase58('41' + randomBytes(20).toString('hex'))!;
    const sender = new TronSender({ url: `${base}/rpc/tron-mainnet`, timeoutMs: 10_000 }, signer);
    const chains = (ct: string) => (ct === 'tron' ? sender : undefined);
    const transfersOut = new OutgoingTransfers({ store: transfers, chain: chains, confirmations: () => 1 });
    const gas = new GasStation({ transfers: transfersOut, store: transfers, chain: chains, station: await stationKeyOf(signer), recordTopUp: async (row) => void (await orders.recordGasTopUp(row)) });
    const deps = { db, transfers: transfersOut, chains, gas, treasuryEvm: '0x' + '11'.repeat(20), treasuryTvm: treasury };
    const sweep = async () => {
      const lines: string[] = [];
      expect(await runTreasuryCommand(['treasury:sweep', '--order', order.order_no], deps, { out: (l) => lines.push(l) })).to.equal(0);
      return lines[0];
    };

    const first = await sweep();
    const topUp = (await transfers.find(order.id, 'gas_topup_sweep'))!;
    expect(topUp, 'the station topped the deposit address up').to.not.equal(undefined);
    let second = first;
    if (first.includes('\tgas top-up\t')) {
      expect(first).to.include(topUp.tx_hash);
      expect(await transfers.find(order.id, 'sweep'), 'nothing swept before the top-up is confirmed').to.equal(undefined);
      await tron.mined(topUp.tx_hash);
      second = await waitFor(async () => {
        const line = await sweep();
        return line.includes('\tswept\t') ? line : undefined;
      }, { timeoutMs: 20_000, what: 'the sweep once the top-up is confirmed' });
    } else {
      // Blocks come every 300 ms here and a top-up counts after two: on a loaded machine it may
      // be confirmed by the time the run reads it back, and the same run sweeps.
      expect(first).to.include('\tswept\t');
    }
    const swept = (await transfers.find(order.id, 'sweep'))!;
    expect(second).to.include(swept.tx_hash);
    // either way the sweep was signed once the top-up was confirmed, with the fee plan it paid for
    expect(swept.detail.gas_topup_tx_hash).to.equal(topUp.tx_hash);
    expect((await transfers.find(order.id, 'gas_topup_sweep'))!.status).to.equal('confirmed');
    const info = await tron.mined(swept.tx_hash);
    expect(Number(info.blockNumber)).to.be.greaterThan(Number((await tron.mined(topUp.tx_hash)).blockNumber));
    expect(swept).to.include({ chain_type: 'tron', from_address: address, to_address: USDT_CONTRACT, asset: USDT_CONTRACT, amount: fees.toString() });
    expect(info.receipt.result).to.equal('SUCCESS');
    const sent = await tx(swept.tx_hash);
    const [contract] = sent.raw_data.contract;
    const call = decodeFunctionData({ abi: erc20Abi, data: `0x${contract.parameter.value.data}` });
    expect([call.functionName, ...(call.args as [string, bigint]).map((a) => (typeof a === 'string' ? a.toLowerCase() : a))]).to.deep.equal(['transfer', `0x${tronBase58ToHex(treasury)!.slice(2)}`, fees]);
    // the fees whole at the treasury; the TRX was the station's, exactly what the sweep may burn at most
    expect(await usdtOf(treasury)).to.equal(fees);
    expect(await usdtOf(address)).to.equal(0n);
    const planned = BigInt(sent.raw_data.fee_limit) + 400n * (await chainParameter('getTransactionFee'));
    expect(await topUpAmount(topUp.tx_hash, address)).to.equal(planned);
    expect(await sweep(), 'a later run sends nothing new').to.include('already sent').and.include(swept.tx_hash);
  });
});
