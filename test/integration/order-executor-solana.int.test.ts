import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { MnemonicSigner, RENT_EXEMPT_MINIMUM } from '@chainpipe/custody';
import type { Knex } from '@chainpipe/db';
import { IntegratorRepository, OrderRepository, OutgoingTransferRepository, type NewOrder } from '@chainpipe/order-store';
import { simSolana, TEST_KEY_MNEMONIC, waitFor, type TopicCollector } from '@chainpipe/testing';
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
    stack = new ExecutorStack({ database: 'order_executor_solana', funded: solPayer.address, confirmations: 'solana=2' });
    await stack.start();
    ({ db, events, base } = stack);
    orders = new OrderRepository(db);
    transfers = new OutgoingTransferRepository(db);
    integratorId = await new IntegratorRepository(db).createIntegrator('Solana executor test');
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
});
