import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { MnemonicSigner, RENT_EXEMPT_MINIMUM } from '@chainpipe/custody';
import type { Knex } from '@chainpipe/db';
import { OrderRepository, OutgoingTransferRepository, type NewOrder } from '@chainpipe/order-store';
import { base58Encode } from '@chainpipe/chains';
import { platformKeyEnv, runAdmin, simSolana, TEST_KEY_MNEMONIC, waitFor, type TopicCollector } from '@chainpipe/testing';
import { ExecutorStack, nextDepositIndex } from './executor-stack';
import { orderFixture } from './order-fixtures';

/**
 * Orders paid on Solana on the real stack: Postgres, Kafka (the tracker's outbox), the simulator
 * as Solana mainnet (a ledger that takes signed transactions) and as ChangeNOW (which sees SOL
 * payins there; THORChain lists no Solana), the executor and tracker processes. The platform's
 * Solana keys are the development signer's (SLIP-0010, m/44'/501'/index'/0'); the user pays from
 * a wallet of its own; the net amount goes to the ChangeNOW payin, a failed order is refunded.
 */
const BTC = 1001;
const SOL = 801; // Solana, 9 decimals
const LAMPORTS = 1_000_000_000n;
/** Solana's base fee of a one-signature transaction (lamports). */
const SIGNATURE_FEE = 5000n;

describe('order executor: orders paid on Solana forwarded and refunded from their deposit addresses (real stack)', function () {
  this.timeout(240_000);
  const signer = new MnemonicSigner(TEST_KEY_MNEMONIC);
  /** The user's Solana wallet: another mnemonic than the platform's. */
  const wallet = new MnemonicSigner('legal winner thank year wave sausage worth useful legal winner thank yellow');
  let solPayer = { index: 0, address: '' };
  let stack: ExecutorStack;
  let db: Knex;
  let orders: OrderRepository;
  let transfers: OutgoingTransferRepository;
  let events: TopicCollector;
  let base = '';
  let integratorId = '';
  /** The SOL order the first test settled, its fees left at its deposit address (swept by a later test). */
  let settled: { orderNo: string; orderId: string; address: string; fees: bigint } | undefined;

  const solana = simSolana(() => base);
  /** An order paid on Solana to the platform's address of a fresh deposit index (Exchanging unless `over.state`). */
  const paidSolanaOrder = async (over: Record<string, unknown>, paid: bigint) => {
    const index = nextDepositIndex();
    const address = await signer.addressAt('svm', index);
    const depositHash = await solana.pay(wallet, solPayer, address, paid);
    const order = await orders.insert(
      orderFixture({
        src_token_id: SOL, dst_token_id: BTC, deposit_chain_type: 'solana', deposit_index: index, deposit_address: address, state: 'Exchanging', amount_in: paid.toString(),
        deposit_tx_hash: depositHash, deposit_amount: paid.toString(), deposited_at: new Date(), ...over,
      } as Partial<NewOrder>),
    );
    return { order, address };
  };
  const solanaTransaction = async (signature: string) => solana.rpc('getTransaction', [signature, { encoding: 'json' }]);
  /** The lamports a Solana transaction moved to `to`: its post − pre balance of that account. */
  const movedTo = (tx: any, to: string): bigint => {
    const i = (tx.transaction.message.accountKeys as string[]).indexOf(to);
    return BigInt(tx.meta.postBalances[i]) - BigInt(tx.meta.preBalances[i]);
  };

  before(async () => {
    solPayer = { index: 0, address: await wallet.addressAt('svm', 0) };
    stack = new ExecutorStack({ database: 'order_executor_solana', integrator: 'Solana executor test', funded: solPayer.address, confirmations: 'solana=2' });
    await stack.start();
    ({ db, events, base, orders, transfers, integratorId } = stack);
  });

  after(async () => {
    expect(await stack?.stop(), 'clean exits').to.deep.equal({ executor: 0, tracker: 0, sim: 0 });
  });

  it('a paid SOL order: exactly received − fee_platform − fee_integrator to the ChangeNOW payin, signed by the deposit address key; ChangeNOW sees the payin and finishes; Completed, then Settled', async () => {
    const changenow = (await db('agg.channels').where({ adapter_kind: 'changenow' }).first('id')) as { id: number };
    const amountIn = 2n * LAMPORTS;
    const feePlatform = 6_000_000n; // 0.3 %
    const feeIntegrator = 5_000_000n; // 0.25 %
    const net = amountIn - feePlatform - feeIntegrator;
    const { order, address } = await paidSolanaOrder(
      { channel_id: changenow.id, channel_kind: 'changenow', provider_order_id: `made-with-the-order-${randomBytes(4).toString('hex')}`, fee_platform: feePlatform.toString(), fee_integrator: feeIntegrator.toString(), min_acceptable_out: '1', integrator_id: integratorId },
      amountIn,
    );

    await waitFor(async () => (await orders.findById(order.id))?.forward_tx_hash ?? undefined, { timeoutMs: 30_000, what: 'the forward recorded on the order' });
    const forwarded = (await orders.findById(order.id))!;
    await solana.landed(forwarded.forward_tx_hash!);
    const tx = await solanaTransaction(forwarded.forward_tx_hash!);
    const execution = forwarded.execution as Record<string, string>;
    // the deposit address signed and paid the fee; the payin got the net amount, read off the chain
    expect(tx.transaction.message.accountKeys[0]).to.equal(address);
    expect(tx.transaction.signatures).to.deep.equal([forwarded.forward_tx_hash]);
    expect(movedTo(tx, execution.payin_address), 'the net amount to the payin').to.equal(net);
    expect(BigInt(tx.meta.fee)).to.equal(SIGNATURE_FEE);
    // the fees stay at the deposit address, less the forward's network fee (above the rent-exempt minimum)
    expect(await solana.balanceOf(address)).to.equal(feePlatform + feeIntegrator - SIGNATURE_FEE);
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
    settled = { orderNo: order.order_no, orderId: order.id, address, fees: feePlatform + feeIntegrator };
    await waitFor(() => events.messages.some((m) => JSON.parse(m.value!.toString()).order_id === order.id && JSON.parse(m.value!.toString()).event === 'forwarded'), { timeoutMs: 20_000, what: 'the forwarded event' });
  });

  it('a failed SOL order with a refund address: principal − the network fee back to it, Refunded, refund_tx_hash set, a refund_sent event', async () => {
    const principal = LAMPORTS / 2n;
    const refundTo = await wallet.addressAt('svm', 7);
    const before = await solana.balanceOf(refundTo);
    const { order, address } = await paidSolanaOrder(
      { channel_kind: 'changenow', state: 'SlippageFailed', refund_address: refundTo, execution: { outcome: 'SlippageFailed', quoted_out: '1', min_out: '2' } as never },
      principal,
    );
    await waitFor(async () => ((await orders.findById(order.id))?.state === 'Refunded' ? true : undefined), { timeoutMs: 30_000, what: 'Refunded' });
    const done = (await orders.findById(order.id))!;
    expect(done.refund_tx_hash).to.be.a('string');
    const tx = await solanaTransaction(done.refund_tx_hash!);
    expect(tx.transaction.message.accountKeys[0]).to.equal(address);
    expect(movedTo(tx, refundTo), 'principal − network fee').to.equal(principal - SIGNATURE_FEE);
    expect(await solana.balanceOf(refundTo)).to.equal(before + principal - SIGNATURE_FEE);
    // everything left: the deposit account is closed (0 is allowed; dust under the rent-exempt minimum would not be)
    expect(await solana.balanceOf(address)).to.equal(0n);
    expect(principal - SIGNATURE_FEE > RENT_EXEMPT_MINIMUM).to.equal(true);
    const [transfer, ...more] = await transfers.listByOrder(order.id);
    expect(more).to.have.length(0);
    expect(transfer).to.include({ kind: 'refund', status: 'confirmed', chain_type: 'solana', tx_hash: done.refund_tx_hash, to_address: refundTo, amount: (principal - SIGNATURE_FEE).toString() });
    expect(transfer.detail).to.include({ network_fee: SIGNATURE_FEE.toString(), principal: principal.toString() });
    const audit = await orders.audit(order.id);
    expect(audit.at(-1)).to.include({ event: 'refund_sent', from_state: 'SlippageFailed', to_state: 'Refunded' });
    await waitFor(() => events.messages.some((m) => JSON.parse(m.value!.toString()).order_id === order.id && JSON.parse(m.value!.toString()).event === 'refund_sent'), { timeoutMs: 20_000, what: 'the refund_sent event' });
  });

  it('treasury:sweep (the admin command as a process) moves a settled SOL order’s fees to TREASURY_ADDRESS_SVM once: all the address holds less the sweep’s fee, closing the account; a second run sends nothing', async () => {
    expect(settled, 'the SOL order of the first test settled').to.not.equal(undefined);
    const { orderNo, orderId, address, fees } = settled!;
    // a treasury account that does not exist yet: it must receive at least the rent-exempt minimum
    const treasury = base58Encode(randomBytes(32));
    const env = { TREASURY_ADDRESS_EVM: '0x' + '11'.repeat(20), TREASURY_ADDRESS_SVM: treasury, CHAIN_RPC_DEFAULT_BASE: `${base}/rpc`, CHAIN_RPC_URLS: '', ...platformKeyEnv(TEST_KEY_MNEMONIC) };
    // after the forward the address holds the fees less the forward's fee; the sweep pays one more
    const expected = fees - SIGNATURE_FEE - SIGNATURE_FEE;
    expect(await solana.balanceOf(address)).to.equal(fees - SIGNATURE_FEE);

    const bad = await runAdmin(stack.databaseUrl, ['treasury:sweep', '--dry-run', '--order', orderNo], { ...env, TREASURY_ADDRESS_SVM: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t' });
    expect(bad.code, 'a Tron address as the Solana treasury stops the command before anything is read').to.not.equal(0);
    expect(bad.out).to.include('TREASURY_ADDRESS_SVM is not a Solana address');

    const dry = await runAdmin(stack.databaseUrl, ['treasury:sweep', '--dry-run', '--order', orderNo], env);
    expect(dry.code, dry.out).to.equal(0);
    expect(dry.out).to.include(`${orderNo}\twould sweep\t${expected}\tfrom ${address}\tto ${treasury}`);
    expect((await transfers.listByOrder(orderId)).filter((t) => t.kind === 'sweep'), 'a dry run signs nothing').to.deep.equal([]);

    const real = await runAdmin(stack.databaseUrl, ['treasury:sweep', '--order', orderNo], env);
    expect(real.code, real.out).to.equal(0);
    const line = real.out.split('\n').find((l) => l.startsWith(`${orderNo}\tswept\t${expected}\t`));
    expect(line, real.out).to.be.a('string');
    const hash = line!.split('\t')[3];
    await solana.landed(hash);
    const tx = await solanaTransaction(hash);
    expect(tx.transaction.message.accountKeys[0], 'signed and paid by the deposit address').to.equal(address);
    expect(movedTo(tx, treasury), 'what reached the treasury, read off the chain').to.equal(expected);
    expect(BigInt(tx.meta.fee)).to.equal(SIGNATURE_FEE);
    expect(await solana.balanceOf(treasury)).to.equal(expected);
    expect(await solana.balanceOf(address), 'everything left: the deposit account is closed').to.equal(0n);
    const [sweep, ...more] = (await transfers.listByOrder(orderId)).filter((t) => t.kind === 'sweep');
    expect(more).to.deep.equal([]);
    expect(sweep).to.include({ chain_type: 'solana', from_address: address, to_address: treasury, tx_hash: hash, amount: expected.toString(), nonce: null });
    expect(sweep.detail).to.include({ network_fee: SIGNATURE_FEE.toString(), fees: fees.toString() });

    // the executor follows every open transfer: the sweep is confirmed, and the order no longer due
    await waitFor(async () => (await transfers.listByOrder(orderId)).some((t) => t.kind === 'sweep' && t.status === 'confirmed'), { timeoutMs: 20_000, what: 'the sweep confirmed' });
    const rerun = await runAdmin(stack.databaseUrl, ['treasury:sweep', '--order', orderNo], env);
    expect(rerun.code, rerun.out).to.equal(0);
    expect(rerun.out).to.not.include('\tswept\t');
    expect(rerun.out).to.include('swept nothing (smallest units) from 0 orders');
    expect((await transfers.listByOrder(orderId)).filter((t) => t.kind === 'sweep')).to.have.length(1);
    expect(await solana.balanceOf(treasury), 'nothing more reached the treasury').to.equal(expected);
  });
});
