import { expect } from 'chai';
import { parseEther } from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import { EvmSender, MnemonicSigner, OutgoingTransfers } from '@chainpipe/custody';
import { createDb, type Knex } from '@chainpipe/db';
import { OrderRepository, OutgoingTransferRepository } from '@chainpipe/order-store';
import { freePort, simChain, spawnTs, stopProcess, TEST_KEY_MNEMONIC, testEnv, waitFor, waitReady, type RunningProcess } from '@chainpipe/testing';
import { orderFixture } from './order-fixtures';

/**
 * Outgoing transfers on real Postgres and the simulator's chain: a transfer is stored signed
 * before its broadcast, so a broadcast that did not happen is made later from the stored bytes
 * (same hash, same nonce), and an order never gets two transfers of one kind.
 */
describe('outgoing transfers: stored before the broadcast, broadcast again from the stored bytes', function () {
  this.timeout(120_000);
  const payer = mnemonicToAccount(TEST_KEY_MNEMONIC, { addressIndex: 13 });
  const signer = new MnemonicSigner(TEST_KEY_MNEMONIC);
  let sim: RunningProcess;
  let base = '';
  let db: Knex;
  let store: OutgoingTransferRepository;
  let sender: EvmSender;
  let transfers: OutgoingTransfers;

  const { rpc, pay } = simChain(() => base);
  const refuseBroadcasts = (refuse: boolean) =>
    fetch(`${base}/sim/chain/ethereum-mainnet/broadcasts`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ refuse }) });
  const fund = (to: string, value: bigint) => pay(payer, to, value);
  /** An order of a fresh deposit index (derived from the test mnemonic), paid. */
  const paidOrder = async (index: number) => {
    const address = await signer.addressAt('evm', index);
    const order = await new OrderRepository(db).insert(orderFixture({ deposit_index: index, deposit_address: address, state: 'Exchanging' }));
    await fund(address, parseEther('0.3'));
    return { order, from: { index, address } };
  };

  before(async () => {
    db = createDb({ url: testEnv().databaseUrl, poolMax: 4 });
    store = new OutgoingTransferRepository(db);
    const [port, ops] = await Promise.all([freePort(), freePort()]);
    base = `http://127.0.0.1:${port}`;
    sim = spawnTs('apps/upstream-sim/src/main.ts', { PORT: String(port), OPS_PORT: String(ops), LOG_LEVEL: 'warn', SIM_BLOCK_MS: '300', SIM_FUNDED_ACCOUNTS: payer.address });
    await waitReady(sim, ops, 60_000);
    sender = new EvmSender({ url: `${base}/rpc/ethereum-mainnet`, chainId: 1, timeoutMs: 5000 }, signer);
    transfers = new OutgoingTransfers({ store, chain: (c) => (c === 'ethereum' ? sender : undefined), confirmations: () => 1 });
  });
  after(async () => {
    await db?.destroy();
    expect(await stopProcess(sim), 'clean exit').to.equal(0);
  });

  // deposit indexes far from other suites' (unique per run: the index column is unique)
  const nextIndex = (() => {
    let i = 1_000_000 + Math.floor(Math.random() * 1_000_000_000);
    return () => i++;
  })();

  it('a broadcast the node refused leaves the signed transfer stored; sent again later, the chain mines exactly those bytes', async () => {
    const { order, from } = await paidOrder(nextIndex());
    const to = '0x' + '42'.repeat(20);
    const intent = { orderId: order.id, kind: 'forward' as const, chainType: 'ethereum', from, call: { to, value: parseEther('0.1'), data: '0x3d3a' }, asset: null, amount: parseEther('0.1'), detail: { memo: '=:' } };
    await refuseBroadcasts(true);
    let refused: Error | undefined;
    try {
      await transfers.send(intent).catch((err: Error) => (refused = err));
    } finally {
      await refuseBroadcasts(false);
    }
    expect(refused?.message).to.match(/takes no transactions/);
    const stored = (await store.find(order.id, 'forward'))!;
    expect(stored).to.include({ status: 'signed', from_address: from.address, to_address: to, amount: parseEther('0.1').toString(), nonce: '0', kind: 'forward' });
    expect(stored.detail).to.deep.equal({ memo: '=:' });
    expect(await rpc('eth_getTransactionByHash', [stored.tx_hash]), 'nothing reached the chain').to.equal(null);

    // a second send (a restart deciding the same forward) re-sends the stored transaction, signing nothing new
    const again = await transfers.send({ ...intent, call: { ...intent.call, value: parseEther('0.2') }, amount: parseEther('0.2') });
    expect(again).to.include({ id: stored.id, tx_hash: stored.tx_hash, status: 'broadcast' });
    await waitFor(async () => (await transfers.follow((await store.find(order.id, 'forward'))!)).status === 'confirmed', { timeoutMs: 20_000, what: 'the forward confirmed' });
    const tx = await rpc('eth_getTransactionByHash', [stored.tx_hash]);
    expect(BigInt(tx.value)).to.equal(parseEther('0.1'));
    expect(tx.from).to.equal(from.address);
    expect(Number(tx.nonce)).to.equal(0);
    expect(Number(await rpc('eth_getTransactionCount', [from.address, 'latest'])), 'one transaction ever left the address').to.equal(1);
    const final = (await store.find(order.id, 'forward'))!;
    expect(final.status).to.equal('confirmed');
    expect(Number(final.block_number)).to.equal(Number((await rpc('eth_getTransactionReceipt', [stored.tx_hash])).blockNumber));
  });

  it('resumeOpen broadcasts every stored unsent transfer; an already mined one is recognised, not sent twice', async () => {
    const { order, from } = await paidOrder(nextIndex());
    const intent = { orderId: order.id, kind: 'refund' as const, chainType: 'ethereum', from, call: { to: '0x' + '43'.repeat(20), value: parseEther('0.05') }, asset: null, amount: parseEther('0.05') };
    await refuseBroadcasts(true);
    await transfers.send(intent).catch(() => undefined);
    await refuseBroadcasts(false);
    const errors: unknown[] = [];
    await transfers.resumeOpen(1000, (_row, err) => errors.push(err));
    const stored = (await store.find(order.id, 'refund'))!;
    expect(stored.status).to.be.oneOf(['broadcast', 'confirmed']);
    await waitFor(async () => (await rpc('eth_getTransactionReceipt', [stored.tx_hash]))?.status === '0x1', { timeoutMs: 20_000, what: 'the refund mined' });
    // a broadcast of the mined bytes: the node knows them; nothing new
    const row = await transfers.broadcast({ ...stored, status: 'signed' });
    expect(row.status).to.equal('broadcast');
    expect(Number(await rpc('eth_getTransactionCount', [from.address, 'latest']))).to.equal(1);
  });

  it('concurrent senders of one (order, kind) store one transfer and broadcast the same transaction', async () => {
    const { order, from } = await paidOrder(nextIndex());
    const intent = (value: bigint) => ({ orderId: order.id, kind: 'forward' as const, chainType: 'ethereum', from, call: { to: '0x' + '44'.repeat(20), value }, asset: null, amount: value });
    const results = await Promise.allSettled([transfers.send(intent(1000n)), transfers.send(intent(2000n)), transfers.send(intent(3000n))]);
    const sent = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    expect(sent.length).to.be.greaterThan(0);
    expect(new Set(sent.map((r) => r.tx_hash)).size).to.equal(1);
    expect(await store.listByOrder(order.id)).to.have.length(1);
  });
});
