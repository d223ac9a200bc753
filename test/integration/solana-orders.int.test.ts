import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { TOPICS } from '@chainpipe/contracts';
import { MnemonicSigner, RENT_EXEMPT_MINIMUM } from '@chainpipe/custody';
import { createDb, type Knex } from '@chainpipe/db';
import { IntegratorRepository, OrderRepository, OutgoingTransferRepository, type NewOrder } from '@chainpipe/order-store';
import {
  collectTopic, createRegistryTopics, freePort, simSolana, spawnTs, stopProcess, suiteDatabase, TEST_KEY_MNEMONIC, testEnv, uniquePrefix, waitFor, waitReady, type RunningProcess, type TopicCollector,
} from '@chainpipe/testing';
import { orderFixture } from './order-fixtures';

/**
 * Orders paid on Solana on the real stack: Postgres, Kafka (the tracker's event outbox), the
 * simulator as Solana mainnet (its ledger takes signed transactions) and as ChangeNOW (which sees
 * SOL payins there), the executor and tracker processes. The platform's Solana keys are the test
 * kit's development signer's (SLIP-0010, m/44'/501'/index'/0'); the user pays from a wallet of
 * its own. A paid order's net amount goes to the ChangeNOW payin; a failed one is refunded.
 */
const SOL = 801; // 9 decimals
const BTC = 1001;
const LAMPORTS = 1_000_000_000n;
/** Solana's base fee of a one-signature transaction (lamports). */
const SIGNATURE_FEE = 5000n;

describe('orders paid on Solana: forwarded to ChangeNOW, refunded when failed (real stack)', function () {
  this.timeout(240_000);
  const platform = new MnemonicSigner(TEST_KEY_MNEMONIC);
  /** The user's wallet: another mnemonic than the platform's. */
  const wallet = new MnemonicSigner('legal winner thank year wave sausage worth useful legal winner thank yellow');
  const env = testEnv();
  const procs: Record<string, RunningProcess> = {};
  let db: Knex;
  let orders: OrderRepository;
  let transfers: OutgoingTransferRepository;
  let events: TopicCollector;
  let base = '';
  let payer = { index: 0, address: '' };
  let integratorId = '';

  const chain = simSolana(() => base);
  let nextIndex = 1_000_000_000 + Math.floor(Math.random() * 100_000_000);
  /** An order paid to the platform's Solana address of a fresh deposit index, put in `over.state`. */
  const paidOrder = async (over: Record<string, unknown>, paid: bigint) => {
    const index = nextIndex++;
    const address = await platform.addressAt('svm', index);
    const depositHash = await chain.pay(wallet, payer, address, paid);
    const order = await orders.insert(
      orderFixture({
        src_token_id: SOL, dst_token_id: BTC, deposit_chain_type: 'solana', deposit_index: index, deposit_address: address, state: 'Exchanging', amount_in: paid.toString(),
        deposit_tx_hash: depositHash, deposit_amount: paid.toString(), deposited_at: new Date(), ...over,
      } as Partial<NewOrder>),
    );
    return { order, address, depositHash };
  };
  const transactionOf = async (signature: string) => chain.rpc('getTransaction', [signature, { encoding: 'json' }]);
  /** The lamports a transaction moved to `to`: its post − pre balance of that account. */
  const movedTo = (tx: any, to: string): bigint => {
    const i = (tx.transaction.message.accountKeys as string[]).indexOf(to);
    return BigInt(tx.meta.postBalances[i]) - BigInt(tx.meta.preBalances[i]);
  };

  before(async () => {
    const databaseUrl = await suiteDatabase('solana_orders');
    db = createDb({ url: databaseUrl, poolMax: 4 });
    orders = new OrderRepository(db);
    transfers = new OutgoingTransferRepository(db);
    integratorId = await new IntegratorRepository(db).createIntegrator('Solana test');
    payer = { index: 0, address: await wallet.addressAt('svm', 0) };
    const prefix = uniquePrefix('sol');
    await createRegistryTopics(prefix);
    events = await collectTopic(`${prefix}${TOPICS.ordersEvents.name}`);
    const [simPort, simOps, trackerOps, executorOps] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
    base = `http://127.0.0.1:${simPort}`;
    procs.sim = spawnTs('apps/upstream-sim/src/main.ts', { PORT: String(simPort), OPS_PORT: String(simOps), LOG_LEVEL: 'warn', SIM_BLOCK_MS: '300', SIM_CHANGENOW_STEP_MS: '200', SIM_FUNDED_ACCOUNTS: payer.address });
    await waitReady(procs.sim, simOps, 60_000);
    const upstreams = { THORNODE_API_URL: `${base}/thornode`, CHANGENOW_API_URL: `${base}/changenow`, CHAIN_RPC_DEFAULT_BASE: `${base}/rpc`, CHAIN_RPC_URLS: '', DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' };
    procs.tracker = spawnTs('apps/order-tracker/src/main.ts', {
      ...upstreams, KAFKA_BROKERS: env.kafkaBrokers.join(','), KAFKA_TOPIC_PREFIX: prefix, OPS_PORT: String(trackerOps), ORDER_TRACKER_GROUP: `${prefix}tracker`, ORDER_TRACKER_INTERVAL_MS: '300', ORDER_TRACKER_SESSION_TIMEOUT_MS: '6000',
    });
    procs.executor = spawnTs('apps/order-executor/src/main.ts', { ...upstreams, OPS_PORT: String(executorOps), ORDER_EXECUTOR_INTERVAL_MS: '300', ORDER_EXECUTOR_CONFIRMATIONS: 'solana=2' });
    await Promise.all([waitReady(procs.tracker, trackerOps, 60_000), waitReady(procs.executor, executorOps, 60_000)]);
  });

  after(async () => {
    await events?.stop();
    const exits: Record<string, unknown> = {};
    for (const name of ['executor', 'tracker', 'sim']) if (procs[name]) exits[name] = await stopProcess(procs[name]);
    await db?.destroy();
    expect(exits, 'clean exits').to.deep.equal({ executor: 0, tracker: 0, sim: 0 });
  });

  it('a paid SOL order: exactly received − fee_platform − fee_integrator to the ChangeNOW payin, signed by the deposit address key; ChangeNOW sees the payin and finishes; Completed, then Settled', async () => {
    const changenow = (await db('agg.channels').where({ adapter_kind: 'changenow' }).first('id')) as { id: number };
    const amountIn = 2n * LAMPORTS;
    const feePlatform = 6_000_000n; // 0.3 %
    const feeIntegrator = 5_000_000n; // 0.25 %
    const net = amountIn - feePlatform - feeIntegrator;
    const { order, address } = await paidOrder(
      { channel_id: changenow.id, channel_kind: 'changenow', provider_order_id: `made-with-the-order-${randomBytes(4).toString('hex')}`, fee_platform: feePlatform.toString(), fee_integrator: feeIntegrator.toString(), min_acceptable_out: '1', integrator_id: integratorId },
      amountIn,
    );

    await waitFor(async () => (await orders.findById(order.id))?.forward_tx_hash ?? undefined, { timeoutMs: 30_000, what: 'the forward recorded on the order' });
    const forwarded = (await orders.findById(order.id))!;
    await chain.landed(forwarded.forward_tx_hash!);
    const tx = await transactionOf(forwarded.forward_tx_hash!);
    const execution = forwarded.execution as Record<string, string>;
    // the deposit address signed and paid the fee; the payin got the net amount, read off the chain
    expect(tx.transaction.message.accountKeys[0]).to.equal(address);
    expect(tx.transaction.signatures).to.deep.equal([forwarded.forward_tx_hash]);
    expect(movedTo(tx, execution.payin_address), 'the net amount to the payin').to.equal(net);
    expect(BigInt(tx.meta.fee)).to.equal(SIGNATURE_FEE);
    // the fees stay at the deposit address, less the forward's network fee (above the rent-exempt minimum)
    expect(await chain.balanceOf(address)).to.equal(feePlatform + feeIntegrator - SIGNATURE_FEE);
    const [stored] = await transfers.listByOrder(order.id);
    expect(stored).to.include({ kind: 'forward', chain_type: 'solana', tx_hash: forwarded.forward_tx_hash, amount: net.toString(), to_address: execution.payin_address, nonce: null });

    const exchange = (await (await fetch(`${base}/changenow/v2/exchange/by-id?id=${execution.provider_order_id}`, { headers: { 'x-changenow-api-key': 'test' } })).json()) as Record<string, unknown>;
    expect(exchange).to.include({ flow: 'fixed-rate', fromCurrency: 'sol', refundAddress: address });
    expect(Number(exchange.expectedAmountFrom)).to.equal(Number(net) / 1e9);
    await waitFor(async () => (await orders.findById(order.id))?.state === 'Settled', { timeoutMs: 30_000, what: 'finished by ChangeNOW, then settled' });
    const finished = (await (await fetch(`${base}/changenow/v2/exchange/by-id?id=${execution.provider_order_id}`, { headers: { 'x-changenow-api-key': 'test' } })).json()) as Record<string, unknown>;
    expect(finished).to.include({ status: 'finished', amountFrom: Number(net) / 1e9 });
    const audit = (await orders.audit(order.id)).map((a) => [a.event, a.to_state]);
    expect(audit).to.deep.equal([['created', 'Exchanging'], ['forwarded', 'Exchanging'], ['channel_status', 'Completed'], ['settle', 'Settled']]);
    await waitFor(() => events.messages.some((m) => JSON.parse(m.value!.toString()).order_id === order.id && JSON.parse(m.value!.toString()).event === 'forwarded'), { timeoutMs: 20_000, what: 'the forwarded event' });
  });

  it('a failed SOL order with a refund address: principal − the network fee back to it, Refunded, refund_tx_hash set, a refund_sent event', async () => {
    const principal = LAMPORTS / 2n;
    const refundTo = await wallet.addressAt('svm', 7);
    const before = await chain.balanceOf(refundTo);
    const { order, address } = await paidOrder(
      { channel_kind: 'changenow', state: 'SlippageFailed', refund_address: refundTo, execution: { outcome: 'SlippageFailed', quoted_out: '1', min_out: '2' } as never },
      principal,
    );
    await waitFor(async () => ((await orders.findById(order.id))?.state === 'Refunded' ? true : undefined), { timeoutMs: 30_000, what: 'Refunded' });
    const done = (await orders.findById(order.id))!;
    expect(done.refund_tx_hash).to.be.a('string');
    const tx = await transactionOf(done.refund_tx_hash!);
    expect(tx.transaction.message.accountKeys[0]).to.equal(address);
    expect(movedTo(tx, refundTo), 'principal − network fee').to.equal(principal - SIGNATURE_FEE);
    expect(await chain.balanceOf(refundTo)).to.equal(before + principal - SIGNATURE_FEE);
    // everything left: the deposit account is closed (0 is allowed; dust under the rent-exempt minimum would not be)
    expect(await chain.balanceOf(address)).to.equal(0n);
    expect(principal - SIGNATURE_FEE > RENT_EXEMPT_MINIMUM).to.equal(true);
    const [transfer, ...more] = await transfers.listByOrder(order.id);
    expect(more).to.have.length(0);
    expect(transfer).to.include({ kind: 'refund', status: 'confirmed', chain_type: 'solana', tx_hash: done.refund_tx_hash, to_address: refundTo, amount: (principal - SIGNATURE_FEE).toString() });
    expect(transfer.detail).to.include({ network_fee: SIGNATURE_FEE.toString(), principal: principal.toString() });
    const audit = await orders.audit(order.id);
    expect(audit.at(-1)).to.include({ event: 'refund_sent', from_state: 'SlippageFailed', to_state: 'Refunded' });
    await waitFor(() => events.messages.some((m) => JSON.parse(m.value!.toString()).order_id === order.id && JSON.parse(m.value!.toString()).event === 'refund_sent'), { timeoutMs: 20_000, what: 'the refund_sent event' });
  });
});
