import { randomBytes, randomInt } from 'node:crypto';
import { hostname, userInfo } from 'node:os';
import { expect } from 'chai';
import { Registry } from 'prom-client';
import { decodeFunctionData, encodeFunctionData, erc20Abi, getAddress, parseEther, type Hex } from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import { parseChainOrigins } from '@chainpipe/chains';
import { TOPICS, loadContracts, type OrderEventMessage } from '@chainpipe/contracts';
import { EvmSender, GAS_STATION_INDEX, GasStation, MnemonicSigner, OutgoingTransfers, originTxLookup, stationKeyOf } from '@chainpipe/custody';
import { createDb, type Knex } from '@chainpipe/db';
import { TopicProducer, createKafka } from '@chainpipe/kafka';
import { OrderDepositRepository, OrderRepository, OutgoingTransferRepository, type NewOrder, type OrderPatch, type OrderRow } from '@chainpipe/order-store';
import { createLogger } from '@chainpipe/runtime';
import { collectTopic, createRegistryTopics, freePort, simChain, spawnTs, stopProcess, suiteDatabase, TEST_KEY_MNEMONIC, testEnv, uniquePrefix, waitFor, waitReady, type RunningProcess, type TopicCollector } from '@chainpipe/testing';
import { runOrderCommand } from '../../apps/admin/src/order-commands';
import { runTreasuryCommand } from '../../apps/admin/src/treasury-commands';
import { DepositOnChain } from '../../apps/order-executor/src/deposit-check';
import { RefundJob } from '../../apps/order-executor/src/refunds';
import { OrderTracker } from '../../apps/order-tracker/src/tracker';
import { orderFixture, voidEarlierChainTransfers } from './order-fixtures';

/**
 * Money the platform sends back or keeps, on the simulated chain of upstream-sim with the real
 * Postgres and Kafka: a failed swap's refund (principal less the network fee) to the refund
 * address, through the outgoing transfers, ending Refunded with the hash on the order and a
 * `refund_sent` event; an operator's resolutions of ManualReview orders; the fee sweep to the
 * treasury, dry run and real run, once per order; a token's refund and sweep from a deposit
 * address without ether, after the gas station's top-up.
 */
const USDT = 102; // Ethereum, 6 decimals
const USDT_CONTRACT = '0xdac17f958d2ee523a2206206994597c13d831ec7';
describe('refunds, ManualReview resolutions and fee sweeps on the simulated chain', function () {
  this.timeout(120_000);
  const payer = mnemonicToAccount(TEST_KEY_MNEMONIC, { addressIndex: 13 });
  const signer = new MnemonicSigner(TEST_KEY_MNEMONIC);
  const logger = createLogger({ name: 'refunds-test', level: 'error' });
  let sim: RunningProcess;
  let base = '';
  let db: Knex;
  /** A database of the suite's own: its executor acts on every paid order it finds (suiteDatabase). */
  let databaseUrl: string;
  let orders: OrderRepository;
  let stored: OutgoingTransferRepository;
  let sender: EvmSender;
  let transfers: OutgoingTransfers;
  let job: RefundJob;
  let producer: TopicProducer;
  let tracker: OrderTracker;
  let events: TopicCollector;
  let gas: GasStation;
  /** The gas station's address: the test key's EVM index 2^31 − 1. */
  let station = '';

  const { rpc, mined, pay: payFrom } = simChain(() => base);
  const pay = (to: string, value: bigint) => payFrom(payer, to, value);
  const freshAddress = () => '0x' + randomBytes(20).toString('hex');
  const reload = async (o: OrderRow) => (await orders.findById(o.id))!;
  const eventsOf = (o: OrderRow): OrderEventMessage[] => events.messages.map((m) => JSON.parse(m.value!.toString()) as OrderEventMessage).filter((e) => e.order_no === o.order_no);

  /** An order of the platform's deposit address `index` (0.1 ETH), paid on the chain, then put in `state` with `patch`. */
  const paidOrder = async (state: OrderRow['state'], patch: OrderPatch, over: Partial<NewOrder> = {}, paid = parseEther('0.1')): Promise<OrderRow> => {
    const index = randomInt(1_000_000, 2_000_000_000);
    const address = await signer.addressAt('evm', index);
    const o = await orders.insert(orderFixture({ deposit_index: index, deposit_address: address, amount_in: parseEther('0.1').toString(), ...over }));
    const hash = await pay(address, paid);
    await db('agg.orders').where({ id: o.id }).update({ ...patch, execution: patch.execution ? JSON.stringify(patch.execution) : null, state, deposit_amount: paid.toString(), deposit_tx_hash: hash, deposited_at: new Date() });
    return reload(o);
  };
  /** A USDT order paid `paid` (smallest units) to a deposit address left without ether (only the token arrived), then put in `state`. */
  const paidTokenOrder = async (state: OrderRow['state'], patch: OrderPatch, paid: bigint, over: Partial<NewOrder> = {}): Promise<OrderRow> => {
    const index = randomInt(1_000_000, 2_000_000_000);
    const address = await signer.addressAt('evm', index);
    const o = await orders.insert(orderFixture({ deposit_index: index, deposit_address: address, src_token_id: USDT, amount_in: paid.toString(), fee_platform: '0', fee_platform_original: '0', ...over }));
    const hash = await payFrom(payer, USDT_CONTRACT, 0n, { data: encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [address as Hex, paid] }), gas: 60_000n });
    await db('agg.orders').where({ id: o.id }).update({ ...patch, execution: patch.execution ? JSON.stringify(patch.execution) : null, state, deposit_amount: paid.toString(), deposit_tx_hash: hash, deposited_at: new Date() });
    return reload(o);
  };
  const tokenBalance = async (holder: string) => BigInt(await rpc('eth_call', [{ to: USDT_CONTRACT, data: encodeFunctionData({ abi: erc20Abi, functionName: 'balanceOf', args: [holder as Hex] }) }, 'latest']));

  /** Runs refund passes (the executor's job) until the order leaves `from`. */
  const refundUntilMoved = async (o: OrderRow) =>
    waitFor(async () => {
      await job.run();
      const now = await reload(o);
      return now.state !== o.state ? now : undefined;
    }, { timeoutMs: 30_000, intervalMs: 200, what: `refund of ${o.order_no}` });
  const lines = () => {
    const out: string[] = [];
    return { io: { out: (l: string) => void out.push(l) }, out };
  };

  before(async () => {
    databaseUrl = await suiteDatabase('refunds');
    const [port, ops] = await Promise.all([freePort(), freePort()]);
    base = `http://127.0.0.1:${port}`;
    station = await signer.addressAt('evm', GAS_STATION_INDEX);
    sim = spawnTs('apps/upstream-sim/src/main.ts', { PORT: String(port), OPS_PORT: String(ops), LOG_LEVEL: 'warn', SIM_BLOCK_MS: '200', SIM_FUNDED_ACCOUNTS: `${payer.address},${station}` });
    db = createDb({ url: databaseUrl, poolMax: 6 });
    orders = new OrderRepository(db);
    stored = new OutgoingTransferRepository(db);
    await voidEarlierChainTransfers(db);
    sender = new EvmSender({ url: `${base}/rpc/ethereum-mainnet`, chainId: 1, timeoutMs: 5000 }, signer);
    const chain = (chainType: string) => (chainType === 'ethereum' ? sender : undefined);
    transfers = new OutgoingTransfers({ store: stored, chain, confirmations: () => 1 });
    gas = new GasStation({ transfers, store: stored, chain, station: await stationKeyOf(signer), recordTopUp: async (row) => void (await orders.recordGasTopUp(row)) });
    const chainTx = originTxLookup(parseChainOrigins('', `${base}/rpc`), 5000);
    job = new RefundJob({ db, transfers, chains: chain, deposits: new DepositOnChain({ db, chainTx }), gas, confirmations: () => 1, logger, registry: new Registry(), batchSize: 1000 });
    const prefix = uniquePrefix('refunds');
    await createRegistryTopics(prefix, [TOPICS.ordersEvents, TOPICS.addressesChanges]);
    producer = new TopicProducer({ kafka: createKafka({ brokers: testEnv().kafkaBrokers, clientId: 'refunds-test', logger }), contracts: loadContracts(), logger, registry: new Registry(), topicPrefix: prefix });
    await producer.connect();
    tracker = new OrderTracker({ db, producer, channels: { status: () => Promise.reject(new Error('not part of this test')) }, logger, registry: new Registry(), depositAppId: 'refunds-test', chainTx, depositVerifyWindowMs: 600_000, batchSize: 500, statusTimeoutMs: 1000 });
    events = await collectTopic(`${prefix}${TOPICS.ordersEvents.name}`);
    await waitReady(sim, ops, 60_000);
  });
  after(async () => {
    await events?.stop();
    await producer?.disconnect();
    await db?.destroy();
    expect(await stopProcess(sim), 'clean exit').to.equal(0);
  });

  it('a failed swap with a refund address: a refund transaction to it of principal − network fee, Refunded, the hash on the order, a refund_sent event', async () => {
    const refundTo = freshAddress();
    const o = await paidOrder('SlippageFailed', { refund_address: refundTo, execution: { outcome: 'SlippageFailed', quoted_out: '240000', min_out: '247500' } });
    const receivedBefore = await sender.balanceOf(refundTo);
    const done = await refundUntilMoved(o);
    expect(done.state).to.equal('Refunded');
    expect(done.refund_tx_hash).to.match(/^0x[0-9a-f]{64}$/);

    const tx = await rpc('eth_getTransactionByHash', [done.refund_tx_hash]);
    expect(tx.from).to.equal(o.deposit_address);
    expect(tx.to).to.equal(refundTo);
    // the network fee the refund was computed with: its gas limit at its fee cap
    const networkFee = BigInt(tx.gas) * BigInt(tx.maxFeePerGas);
    expect(BigInt(tx.value), 'principal − network fee').to.equal(parseEther('0.1') - networkFee);
    expect(await sender.balanceOf(refundTo)).to.equal(receivedBefore + parseEther('0.1') - networkFee);

    const [transfer, ...more] = await stored.listByOrder(o.id);
    expect(more, 'one transfer').to.have.length(0);
    expect(transfer).to.include({ kind: 'refund', status: 'confirmed', tx_hash: done.refund_tx_hash, to_address: refundTo, amount: (parseEther('0.1') - networkFee).toString() });
    const audit = await orders.audit(o.id);
    expect(audit.at(-1)).to.include({ event: 'refund_sent', from_state: 'SlippageFailed', to_state: 'Refunded' });
    expect(audit.at(-1)!.detail).to.include({ tx_hash: done.refund_tx_hash, to: refundTo });

    await tracker.publishEvents();
    const sent = await waitFor(() => eventsOf(o).find((e) => e.event === 'refund_sent'), { what: 'refund_sent event' });
    expect(sent).to.include({ from_state: 'SlippageFailed', to_state: 'Refunded' });

    await job.run();
    expect(await stored.listByOrder(o.id), 'a later pass sends nothing again').to.have.length(1);
    expect(await reload(o)).to.include({ state: 'Refunded', version: done.version });
  });

  it('RefundAddressPending sends nothing until the refund request supplies the address; then the refund goes out', async () => {
    const o = await paidOrder('RefundAddressPending', { execution: { outcome: 'ChainFailed', tx_hash: null } });
    await job.run();
    expect(await stored.listByOrder(o.id), 'no address, no transfer').to.have.length(0);
    // what the refund endpoint writes (`requestRefund` of the gateway's order service)
    const refundTo = freshAddress();
    await orders.transition(o, o.state, { refund_address: refundTo, refund_requested_at: new Date() }, { event: 'refund_request', detail: { refund_address: refundTo } });
    const done = await refundUntilMoved(await reload(o));
    expect(done).to.include({ state: 'Refunded' });
    expect((await rpc('eth_getTransactionByHash', [done.refund_tx_hash])).to).to.equal(refundTo);
  });

  it('a forwarded swap that failed is refunded only once the channel\'s refund transaction, by its hash, has landed at the deposit address; what it brought is recorded', async () => {
    const refundTo = freshAddress();
    const o = await paidOrder('ChainFailed', { refund_address: refundTo, execution: { outcome: 'ChainFailed', tx_hash: null } });
    await db('agg.orders').where({ id: o.id }).update({ forward_tx_hash: '0x' + 'f'.repeat(64) });
    await job.run();
    expect(await stored.listByOrder(o.id), 'the channel still holds the principal').to.have.length(0);
    // the channel's refund reported by the tracker (as its sweep records it): recorded in place, once
    const back = await tracker.apply(await reload(o), { type: 'channel_status', outcome: 'Refunded' }, () => ({ execution: { outcome: 'ChainFailed', provider_outcome: 'Refunded', tx_hash: '0x' + 'a'.repeat(64) } }), { event: 'channel_status' });
    expect(back).to.include({ state: 'ChainFailed' });
    const again = await tracker.apply(back, { type: 'channel_status', outcome: 'Refunded' }, () => ({}), { event: 'channel_status' });
    expect(again.version, 'not recorded twice').to.equal(back.version);
    // the channel's refund transaction is not on the chain: nothing goes back yet, whatever the address holds
    for (let i = 0; i < 3; i++) await job.run();
    expect(await stored.listByOrder(o.id), 'the channel\'s refund has not landed').to.have.length(0);
    // it lands: the channel's refund pays the deposit address (named by its hash, as the channel reports it: upper case, no 0x)
    const returned = parseEther('0.093');
    const landed = await pay(o.deposit_address, returned);
    await db('agg.orders').where({ id: o.id }).update({ execution: JSON.stringify({ outcome: 'ChainFailed', provider_outcome: 'Refunded', tx_hash: landed.slice(2).toUpperCase() }) });
    const done = await refundUntilMoved(await reload(o));
    expect(done).to.include({ state: 'Refunded' });
    const refund = (await stored.find(o.id, 'refund'))!;
    expect(refund.detail, 'what the channel\'s refund brought, by its hash').to.include({ provider_refund_tx_hash: landed, provider_refund_amount: returned.toString() });
  });

  it('every paid order has a way out: order:refund of a keyless failed swap without refund address and of a paid order not yet forwarded; never of a forwarded one, which order:close ends in FailedNoRefund', async () => {
    const slippage = { outcome: 'SlippageFailed', quoted_out: '1', min_out: '2' };
    // created without a key: no integrator key can read it or ask for its refund
    const keyless = await paidOrder('SlippageFailed', { execution: slippage });
    expect(keyless).to.include({ integrator_id: null, refund_address: null });
    const shown = lines();
    expect(await runOrderCommand(['order:show', '--order', keyless.order_no], db, shown.io)).to.equal(0);
    expect(JSON.parse(shown.out[0])).to.include({ order_no: keyless.order_no, state: 'SlippageFailed' });
    const refundTo = freshAddress();
    const ok = lines();
    expect(await runOrderCommand(['order:refund', '--order', keyless.order_no, '--address', refundTo, '--operator', 'frank'], db, ok.io), ok.out.join('\n')).to.equal(0);
    expect(await reload(keyless)).to.include({ state: 'SlippageFailed', resolution: 'refund', refund_address: refundTo });
    const refunded = await refundUntilMoved(keyless);
    expect(refunded).to.include({ state: 'Refunded' });
    expect((await rpc('eth_getTransactionByHash', [refunded.refund_tx_hash])).to).to.equal(refundTo);

    // paid, not forwarded (the executor waits on it): taken back, refunded as a resolved review
    const waiting = await paidOrder('Exchanging', {});
    const back = freshAddress();
    expect(await runOrderCommand(['order:refund', '--order', waiting.order_no, '--address', back], db, lines().io)).to.equal(0);
    const taken = await reload(waiting);
    expect(taken).to.include({ state: 'ManualReview', resolution: 'refund', refund_address: back });
    expect(await refundUntilMoved(taken)).to.include({ state: 'Refunded' });
    expect((await orders.audit(waiting.id)).map((a) => [a.event, a.from_state, a.to_state])).to.deep.equal([
      ['created', null, 'Depositing'],
      ['operator_refund', 'Exchanging', 'ManualReview'],
      ['refund_sent', 'ManualReview', 'Refunded'],
    ]);

    // forwarded: the channel holds the principal, nothing to refund here; an operator who knows it lost closes the order
    const forwarded = await paidOrder('Exchanging', { forward_tx_hash: '0x' + 'f1'.repeat(32) });
    const refused = lines();
    expect(await runOrderCommand(['order:refund', '--order', forwarded.order_no, '--address', freshAddress()], db, refused.io)).to.equal(1);
    expect(refused.out[0]).to.include('the principal is with the channel');
    expect(await runOrderCommand(['order:close', '--order', forwarded.order_no], db, lines().io).catch((e: Error) => e.message)).to.equal('--reason is required for order:close');
    expect(await runOrderCommand(['order:close', '--order', forwarded.order_no, '--reason', 'channel lost the swap', '--operator', 'grace'], db, lines().io)).to.equal(0);
    expect(await reload(forwarded)).to.include({ state: 'FailedNoRefund' });
    expect((await orders.audit(forwarded.id)).at(-1)).to.deep.include({ event: 'operator_close', from_state: 'Exchanging', to_state: 'FailedNoRefund' });
    expect((await orders.audit(forwarded.id)).at(-1)!.detail).to.include({ reason: 'channel lost the swap', operator: 'grace' });
    expect(await runOrderCommand(['order:close', '--order', forwarded.order_no, '--reason', 'again'], db, lines().io), 'final').to.equal(1);
  });

  it('a second payment to a refunded order goes back to its refund address: the return transfer, less its network fee, and an extra_returned event', async () => {
    const refundTo = freshAddress();
    const o = await paidOrder('SlippageFailed', { refund_address: refundTo, execution: { outcome: 'SlippageFailed', quoted_out: '1', min_out: '2' } });
    const refunded = await refundUntilMoved(o);
    expect(refunded.state).to.equal('Refunded');
    // paid again after the refund: recorded by the tracker as an extra deposit, verified on the chain
    const again = parseEther('0.02');
    const hash = await pay(o.deposit_address, again);
    const deposits = new OrderDepositRepository(db);
    const row = await deposits.record({ order_id: o.id, chain_type: 'ethereum', network: 'ethereum-mainnet', tx_hash: hash, address: o.deposit_address }, new Date());
    await deposits.checked(row.id, { status: 'verified', amount: again }, new Date());
    const returned = await waitFor(async () => {
      await job.run();
      const t = await stored.find(o.id, 'return');
      return t?.status === 'confirmed' ? t : undefined;
    }, { timeoutMs: 30_000, intervalMs: 200, what: 'the extra deposit returned' });
    const tx = await rpc('eth_getTransactionByHash', [returned.tx_hash]);
    expect(tx).to.include({ from: o.deposit_address, to: refundTo });
    expect(BigInt(tx.value), 'the extra deposit less the network fee of its return').to.equal(again - BigInt(tx.gas) * BigInt(tx.maxFeePerGas));
    expect(returned.detail).to.deep.include({ deposits: [hash], extras: again.toString() });
    expect((await orders.audit(o.id)).at(-1)).to.deep.include({ event: 'extra_returned', from_state: 'Refunded', to_state: 'Refunded' });
    await job.run();
    expect((await stored.listByOrder(o.id)).filter((t) => t.kind === 'return'), 'once').to.have.length(1);
  });

  it('a failed swap whose whole deposit is less than the network fee of its refund ends in FailedNoRefund, the figures recorded', async () => {
    const dust = await paidOrder('SlippageFailed', { refund_address: freshAddress(), execution: { outcome: 'SlippageFailed', quoted_out: '1', min_out: '2' } }, {}, 1000n);
    const ended = await refundUntilMoved(dust);
    expect(ended).to.include({ state: 'FailedNoRefund', refund_tx_hash: null });
    const last = (await orders.audit(dust.id)).at(-1)!;
    expect(last).to.include({ event: 'refund_impossible', from_state: 'SlippageFailed', to_state: 'FailedNoRefund' });
    expect(BigInt(String(last.detail.network_fee)) >= 1000n, 'the fee is at least the deposit').to.equal(true);
    expect(last.detail.principal).to.equal('1000');
    expect(await stored.listByOrder(dust.id), 'nothing sent').to.have.length(0);
  });

  it('ManualReview: an operator refund sends the whole deposit (less the fee) to the address given; an operator execution hands the order to the executor', async () => {
    // a deposit after the order expired: ManualReview with the received amount recorded
    const late = await paidOrder('ManualReview', {}, {}, parseEther('0.05'));
    await job.run();
    expect(await stored.listByOrder(late.id), 'no refund before an operator decides').to.have.length(0);

    const bad = lines();
    expect(await runOrderCommand(['order:refund', '--order', late.order_no], db, bad.io)).to.equal(1);
    expect(bad.out[0]).to.match(/has no refund address/);
    expect(await runOrderCommand(['order:refund', '--order', late.order_no, '--address', 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4'], db, bad.io), 'not a source-chain address').to.equal(1);

    const refundTo = freshAddress();
    const ok = lines();
    expect(await runOrderCommand(['order:refund', '--order', late.order_no, '--address', refundTo.toUpperCase().replace('0X', '0x'), '--operator', 'alice'], db, ok.io)).to.equal(0);
    expect(ok.out[0]).to.include(`refund of ${parseEther('0.05')} to ${refundTo}`);
    const resolved = await reload(late);
    expect(resolved).to.include({ state: 'ManualReview', resolution: 'refund', refund_address: refundTo });
    const twice = lines();
    expect(await runOrderCommand(['order:execute', '--order', late.order_no], db, twice.io), 'one resolution per order').to.equal(1);

    const done = await refundUntilMoved(resolved);
    expect(done).to.include({ state: 'Refunded' });
    const tx = await rpc('eth_getTransactionByHash', [done.refund_tx_hash]);
    expect(tx.to).to.equal(refundTo);
    expect(BigInt(tx.value), 'the deposit in full, less the network fee').to.equal(parseEther('0.05') - BigInt(tx.gas) * BigInt(tx.maxFeePerGas));
    expect((await orders.audit(late.id)).slice(-2).map((a) => [a.event, a.from_state, a.to_state])).to.deep.equal([
      ['operator_refund', 'ManualReview', 'ManualReview'],
      ['refund_sent', 'ManualReview', 'Refunded'],
    ]);
    expect((await orders.audit(late.id)).at(-2)!.detail, 'who ordered the refund').to.include({ operator: 'alice' });

    const short = await paidOrder('ManualReview', {}, {}, parseEther('0.09'));
    const exec = lines();
    expect(await runOrderCommand(['order:execute', '--order', short.order_no], db, exec.io)).to.equal(0);
    expect(await reload(short)).to.include({ state: 'Exchanging', resolution: 'execute' });
    expect((await orders.audit(short.id)).at(-1)).to.include({ event: 'operator_execute', from_state: 'ManualReview', to_state: 'Exchanging' });
    // without --operator: CHAINPIPE_OPERATOR, else the login and host the command ran under
    expect((await orders.audit(short.id)).at(-1)!.detail).to.include({ operator: process.env.CHAINPIPE_OPERATOR ?? `${userInfo().username}@${hostname()}` });
    await job.run();
    expect(await stored.listByOrder(short.id), 'an executed order is not refunded').to.have.length(0);
  });

  it('treasury:sweep moves fee_platform + fee_integrator of completed orders to the treasury: a dry run signs nothing, a run sends each once', async () => {
    const treasury = freshAddress();
    const fees = { fee_platform: '300000000000000', fee_integrator: '250000000000000' };
    const completed = await paidOrder('Completed', {}, fees);
    const settled = await paidOrder('Settled', {}, fees);
    const failed = await paidOrder('ChainFailed', { execution: { outcome: 'ChainFailed' } }, fees);
    const deps = { db, transfers, chains: (ct: string) => (ct === 'ethereum' ? sender : undefined), treasuryEvm: treasury };
    // one order per run (--order): other suites' orders in the shared test database are not this test's
    const sweep = async (o: OrderRow, dryRun: boolean) => {
      const { io, out } = lines();
      const code = await runTreasuryCommand(['treasury:sweep', ...(dryRun ? ['--dry-run'] : []), '--order', o.order_no, '--operator', 'carol (treasury)'], deps, io);
      return { code, rows: out.filter((l) => l.startsWith(o.order_no)).map((l) => l.split('\t')), out };
    };

    for (const o of [completed, settled]) {
      const dry = await sweep(o, true);
      expect(dry.code, dry.out.join('\n')).to.equal(0);
      expect(dry.rows.map((r) => r.slice(0, 3))).to.deep.equal([[o.order_no, 'would sweep', '550000000000000']]);
      expect(await stored.listByOrder(o.id), 'a dry run signs nothing').to.have.length(0);
    }
    const failedDry = await sweep(failed, true);
    expect(failedDry.rows, 'a failed swap is not swept').to.deep.equal([]);

    const treasuryBefore = await sender.balanceOf(treasury);
    for (const o of [completed, settled]) {
      const run = await sweep(o, false);
      expect(run.code, run.out.join('\n')).to.equal(0);
      const [[no, what, amount, hash]] = run.rows;
      expect([no, what, amount]).to.deep.equal([o.order_no, 'swept', '550000000000000']);
      expect(hash).to.match(/^0x[0-9a-f]{64}$/);
      await mined(hash);
      const tx = await rpc('eth_getTransactionByHash', [hash]);
      expect(tx).to.include({ from: o.deposit_address, to: treasury });
      expect((await stored.find(o.id, 'sweep'))!.detail, 'who swept, on the transfer').to.include({ operator: 'carol (treasury)' });
    }
    expect(await sender.balanceOf(treasury)).to.equal(treasuryBefore + 2n * 550_000_000_000_000n);
    expect(await stored.listByOrder(failed.id), 'a failed swap keeps everything for its refund').to.have.length(0);

    for (const o of [completed, settled]) {
      const again = await sweep(o, false);
      expect(again.code).to.equal(0);
      expect(await stored.listByOrder(o.id), 'once per order').to.have.length(1);
      expect(again.rows.some((r) => r[1] === 'swept')).to.equal(false);
    }
    expect(await sender.balanceOf(treasury), 'nothing sent twice').to.equal(treasuryBefore + 2n * 550_000_000_000_000n);
  });
  it("a failed USDT swap whose deposit address holds no ether: the gas station sends the refund's network fee, then the principal goes back whole by the token's transfer: Refunded", async () => {
    const refundTo = freshAddress();
    const principal = 40_000_000n; // 40 USDT
    const o = await paidTokenOrder('SlippageFailed', { refund_address: refundTo, execution: { outcome: 'SlippageFailed', quoted_out: '1', min_out: '2' } }, principal);
    expect(BigInt(await rpc('eth_getBalance', [o.deposit_address, 'latest'])), 'no ether at the deposit address').to.equal(0n);
    const done = await refundUntilMoved(o);
    expect(done.state).to.equal('Refunded');

    const [topUp, refund, ...more] = await stored.listByOrder(o.id);
    expect(more).to.deep.equal([]);
    expect(topUp).to.include({ kind: 'gas_topup_refund', status: 'confirmed', from_address: station, to_address: o.deposit_address });
    // the token as the price reference names it (checksummed)
    expect(refund).to.include({ kind: 'refund', status: 'confirmed', tx_hash: done.refund_tx_hash, asset: getAddress(USDT_CONTRACT), amount: principal.toString() });
    // read off the chain: the token's transfer of the whole principal, paid for by exactly the top-up
    const tx = await rpc('eth_getTransactionByHash', [done.refund_tx_hash]);
    expect(tx).to.include({ from: o.deposit_address, to: USDT_CONTRACT });
    expect(BigInt(tx.value)).to.equal(0n);
    expect(decodeFunctionData({ abi: erc20Abi, data: tx.input })).to.deep.equal({ functionName: 'transfer', args: [getAddress(refundTo), principal] });
    const topUpTx = await rpc('eth_getTransactionByHash', [topUp.tx_hash]);
    expect(topUpTx).to.include({ from: station, to: o.deposit_address });
    expect(BigInt(topUpTx.value), "the refund's gas limit at its fee cap").to.equal(BigInt(tx.gas) * BigInt(tx.maxFeePerGas));
    expect(await tokenBalance(refundTo)).to.equal(principal);
    expect(await tokenBalance(o.deposit_address)).to.equal(0n);

    const audit = (await orders.audit(o.id)).slice(-2);
    expect(audit.map((a) => [a.event, a.from_state, a.to_state])).to.deep.equal([['gas_topup', 'SlippageFailed', 'SlippageFailed'], ['refund_sent', 'SlippageFailed', 'Refunded']]);
    expect(audit[0].detail).to.deep.equal({ tx_hash: topUp.tx_hash, purpose: 'refund', amount: topUp.amount, from: station, to: o.deposit_address, chain_type: 'ethereum' });
    expect(audit[1].detail).to.include({ tx_hash: done.refund_tx_hash, to: refundTo, amount: principal.toString(), token: getAddress(USDT_CONTRACT) });
    await tracker.publishEvents();
    await waitFor(() => eventsOf(o).find((e) => e.event === 'gas_topup'), { what: 'gas_topup event' });
  });

  it('treasury:sweep of USDT fees: the gas station tops the deposit address up first (shown; run again), then the fees go to the treasury by the token’s transfer', async () => {
    const treasury = freshAddress();
    const fees = { fee_platform: '300000', fee_integrator: '200000' };
    // after its forward a completed order's deposit address holds its fees in the token, no ether
    const o = await paidTokenOrder('Completed', {}, 500_000n, fees);
    const deps = { db, transfers, chains: (ct: string) => (ct === 'ethereum' ? sender : undefined), treasuryEvm: treasury, gas };
    const sweep = async (dryRun = false) => {
      const { io, out } = lines();
      const code = await runTreasuryCommand(['treasury:sweep', ...(dryRun ? ['--dry-run'] : []), '--order', o.order_no], deps, io);
      return { code, rows: out.filter((l) => l.startsWith(o.order_no)).map((l) => l.split('\t')), out };
    };
    const dry = await sweep(true);
    expect(dry.code, dry.out.join('\n')).to.equal(0);
    expect(dry.rows.map((r) => r.slice(0, 3))).to.deep.equal([[o.order_no, 'would sweep', '500000']]);
    expect(await stored.listByOrder(o.id), 'a dry run signs nothing').to.deep.equal([]);

    // a run shows the top-up while it waits for its confirmation; the run after it is mined sends
    // the sweep (one run does both when the simulator mines the top-up between its broadcast and
    // the run's look at its receipt, as a loaded machine makes likely)
    const first = await sweep();
    expect(first.code, first.out.join('\n')).to.equal(0);
    const [[, what, , firstHash]] = first.rows;
    expect(what).to.be.oneOf(['gas top-up', 'swept']);
    let swept = first.rows[0];
    if (what === 'gas top-up') {
      await mined(firstHash);
      const second = await sweep();
      expect(second.code, second.out.join('\n')).to.equal(0);
      swept = second.rows[0];
    }
    const [, sweptWhat, amount, sweepHash] = swept;
    expect([sweptWhat, amount]).to.deep.equal(['swept', '500000']);
    const topUpRow = await stored.find(o.id, 'gas_topup_sweep');
    expect(topUpRow, 'the sweep’s gas top-up is stored').to.not.equal(undefined);
    if (what === 'gas top-up') expect(firstHash).to.equal(topUpRow!.tx_hash);
    const [topUpAmount, topUpHash] = [topUpRow!.amount, topUpRow!.tx_hash];
    await mined(topUpHash);
    await mined(sweepHash);
    const tx = await rpc('eth_getTransactionByHash', [sweepHash]);
    expect(tx).to.include({ from: o.deposit_address, to: USDT_CONTRACT });
    expect(decodeFunctionData({ abi: erc20Abi, data: tx.input })).to.deep.equal({ functionName: 'transfer', args: [getAddress(treasury), 500_000n] });
    expect(BigInt(topUpAmount), "the sweep's gas limit at its fee cap").to.equal(BigInt(tx.gas) * BigInt(tx.maxFeePerGas));
    expect(await tokenBalance(treasury)).to.equal(500_000n);
    expect((await stored.listByOrder(o.id)).map((t) => [t.kind, t.from_address])).to.deep.equal([['gas_topup_sweep', station], ['sweep', o.deposit_address]]);
    expect((await orders.audit(o.id)).at(-1)).to.deep.include({ event: 'gas_topup', from_state: 'Completed', to_state: 'Completed' });
    expect((await orders.audit(o.id)).at(-1)!.detail).to.include({ tx_hash: topUpHash, purpose: 'sweep' });

    const again = await sweep();
    expect(again.rows.map((r) => r[1])).to.deep.equal(['already sent']);
    expect(await tokenBalance(treasury), 'nothing sent twice').to.equal(500_000n);
  });
  it("the executor's and the admin's gas stations topping up at once never sign one nonce twice: consecutive nonces, every top-up mined", async () => {
    // two processes' stations: each its own database pool, sender and outgoing transfers
    const other = createDb({ url: databaseUrl, poolMax: 1 });
    try {
      const otherStore = new OutgoingTransferRepository(other);
      const otherSender = new EvmSender({ url: `${base}/rpc/ethereum-mainnet`, chainId: 1, timeoutMs: 5000 }, signer);
      const otherChain = (ct: string) => (ct === 'ethereum' ? otherSender : undefined);
      const otherGas = new GasStation({
        transfers: new OutgoingTransfers({ store: otherStore, chain: otherChain, confirmations: () => 1 }),
        store: otherStore,
        chain: otherChain,
        station: await stationKeyOf(signer),
        recordTopUp: async (row) => void (await new OrderRepository(other).recordGasTopUp(row)),
      });
      const placed: OrderRow[] = [];
      // the payer pays one after the other (its own nonces); the stations race
      for (let i = 0; i < 6; i++) placed.push(await paidTokenOrder('Completed', {}, 1_000_000n));
      const need = (o: OrderRow, i: number) => ({ orderId: o.id, purpose: 'sweep' as const, chainType: 'ethereum', address: o.deposit_address, plans: [{ maxNetworkFee: 1_000_000_000_000n * BigInt(i + 1) }] });
      const first = await Promise.all(placed.map((o, i) => (i % 2 ? otherGas : gas).ensure(need(o, i))));
      expect(first.map((g) => g.kind).every((k) => k === 'waiting' || k === 'ready')).to.equal(true);
      const rows = await Promise.all(placed.map(async (o) => (await stored.find(o.id, 'gas_topup_sweep'))!));
      const nonces = rows.map((r) => Number(r.nonce)).sort((a, b) => a - b);
      expect(new Set(nonces).size, 'six nonces').to.equal(6);
      expect(nonces.at(-1)! - nonces[0], 'consecutive').to.equal(5);
      for (const [i, o] of placed.entries()) {
        const ready = await waitFor(async () => {
          const g = await gas.ensure(need(o, i));
          return g.kind === 'ready' ? g : undefined;
        }, { timeoutMs: 20_000, what: `top-up of order ${i}` });
        const tx = await rpc('eth_getTransactionByHash', [ready.topUp.tx_hash]);
        expect(tx).to.include({ from: station, to: o.deposit_address });
        expect(Number(tx.nonce)).to.equal(Number(ready.topUp.nonce));
        // the address held nothing: exactly the plan's network fee
        expect(BigInt(await rpc('eth_getBalance', [o.deposit_address, 'latest']))).to.equal(1_000_000_000_000n * BigInt(i + 1));
      }
    } finally {
      await other.destroy();
    }
  });
});
