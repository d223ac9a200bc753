import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { parseEther } from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import { GAS_STATION_INDEX, MnemonicSigner } from '@chainpipe/custody';
import { createDb, type Knex } from '@chainpipe/db';
import { OrderRepository, OutgoingTransferRepository, type NewOrder, type OrderRow } from '@chainpipe/order-store';
import { freePort, platformKeyEnv, runAdmin, simChain, spawnTs, stopProcess, suiteDatabase, TEST_KEY_MNEMONIC, waitFor, waitReady, type RunningProcess } from '@chainpipe/testing';
import { orderFixture } from './order-fixtures';

/**
 * The operator's money commands as an operator runs them (`npm run admin -- …`, a process of its
 * own) against the real stack: the simulator's chain, Postgres and the order executor process,
 * whose refund job sends what `order:refund` decided; `treasury:sweep` dry run and real run.
 */
describe('admin money commands with the order executor (real stack)', function () {
  this.timeout(180_000);
  const payer = mnemonicToAccount(TEST_KEY_MNEMONIC, { addressIndex: 19 });
  const signer = new MnemonicSigner(TEST_KEY_MNEMONIC);
  const procs: Record<string, RunningProcess> = {};
  let db: Knex;
  /** A database of the suite's own: its executor acts on every paid order it finds (suiteDatabase). */
  let databaseUrl: string;
  let orders: OrderRepository;
  let base = '';
  /** The gas station's addresses: the test key's EVM and Tron index 2^31 − 1. */
  let station = '';
  let tronStation = '';
  let nextIndex = 1_500_000_000 + Math.floor(Math.random() * 100_000_000);

  const { rpc, mined, pay: payFrom } = simChain(() => base);
  const pay = (to: string, value: bigint) => payFrom(payer, to, value);
  /** An order of a fresh deposit index, paid `paid` on the chain, in `state`. */
  const paidOrder = async (state: OrderRow['state'], paid: bigint, over: Partial<NewOrder> = {}) => {
    const index = nextIndex++;
    const address = await signer.addressAt('evm', index);
    const hash = await pay(address, paid);
    const o = await orders.insert(orderFixture({ deposit_index: index, deposit_address: address, amount_in: parseEther('0.1').toString(), ...over }));
    await db('agg.orders').where({ id: o.id }).update({ state, deposit_amount: paid.toString(), deposit_tx_hash: hash, deposited_at: new Date() });
    return (await orders.findById(o.id))!;
  };
  const admin = (args: string[], extra: Record<string, string> = {}) => runAdmin(databaseUrl, args, extra);

  before(async () => {
    databaseUrl = await suiteDatabase('money_admin');
    db = createDb({ url: databaseUrl, poolMax: 4 });
    orders = new OrderRepository(db);
    const [simPort, simOps, execOps] = await Promise.all([freePort(), freePort(), freePort()]);
    base = `http://127.0.0.1:${simPort}`;
    station = await signer.addressAt('evm', GAS_STATION_INDEX);
    tronStation = await signer.addressAt('tvm', GAS_STATION_INDEX);
    procs.sim = spawnTs('apps/upstream-sim/src/main.ts', { PORT: String(simPort), OPS_PORT: String(simOps), LOG_LEVEL: 'warn', SIM_BLOCK_MS: '300', SIM_FUNDED_ACCOUNTS: `${payer.address},${station}`, SIM_FUNDED_TRON_ADDRESSES: tronStation });
    await waitReady(procs.sim, simOps, 60_000);
    procs.executor = spawnTs('apps/order-executor/src/main.ts', {
      THORNODE_API_URL: `${base}/thornode`, CHANGENOW_API_URL: `${base}/changenow`, CHAIN_RPC_DEFAULT_BASE: `${base}/rpc`, CHAIN_RPC_URLS: '', DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn',
      OPS_PORT: String(execOps), ORDER_EXECUTOR_INTERVAL_MS: '300', ORDER_EXECUTOR_CONFIRMATIONS: 'ethereum=1',
    });
    await waitReady(procs.executor, execOps, 60_000);
  });
  after(async () => {
    const exits: Record<string, unknown> = {};
    for (const name of ['executor', 'sim']) if (procs[name]) exits[name] = await stopProcess(procs[name]);
    await db?.destroy();
    expect(exits, 'clean exits').to.deep.equal({ executor: 0, sim: 0 });
  });

  it('order:refund of a late deposit in ManualReview: the executor sends it in full less the network fee to the address given; Refunded', async () => {
    const late = await paidOrder('ManualReview', parseEther('0.07'));
    const refundTo = '0x' + randomBytes(20).toString('hex');
    const refused = await admin(['order:refund', '--order', late.order_no]);
    expect(refused.code, refused.out).to.equal(1);
    expect(refused.out).to.include('has no refund address');

    const done = await admin(['order:refund', '--order', late.order_no, '--address', refundTo]);
    expect(done.code, done.out).to.equal(0);
    expect(done.out).to.include(`refund of ${parseEther('0.07')} to ${refundTo} recorded`);
    const refunded = await waitFor(async () => {
      const o = (await orders.findById(late.id))!;
      return o.state === 'Refunded' ? o : undefined;
    }, { timeoutMs: 30_000, what: 'the executor refunds it' });
    const tx = await rpc('eth_getTransactionByHash', [refunded.refund_tx_hash]);
    expect(tx.from).to.equal(late.deposit_address);
    expect(tx.to).to.equal(refundTo);
    expect(BigInt(tx.value), 'the deposit in full, less the network fee').to.equal(parseEther('0.07') - BigInt(tx.gas) * BigInt(tx.maxFeePerGas));
    expect((await orders.audit(late.id)).map((a) => [a.event, a.to_state])).to.deep.equal([['created', 'Depositing'], ['operator_refund', 'ManualReview'], ['refund_sent', 'Refunded']]);

    const again = await admin(['order:refund', '--order', late.order_no, '--address', refundTo]);
    expect(again.code, 'a refunded order is not refunded again').to.equal(1);
  });

  it('order:execute hands a ManualReview deposit to the executor as a paid order', async () => {
    const short = await paidOrder('ManualReview', parseEther('0.09'));
    const done = await admin(['order:execute', '--order', short.order_no]);
    expect(done.code, done.out).to.equal(0);
    expect(await orders.findById(short.id)).to.include({ state: 'Exchanging', resolution: 'execute' });
  });

  it('treasury:sweep: the dry run prints what it would move and signs nothing; the run prints the hash of a transfer of the fees to the treasury; a rerun sends nothing again', async () => {
    const treasury = '0x' + randomBytes(20).toString('hex');
    const fees = { fee_platform: '400000000000000', fee_integrator: '100000000000000' };
    const done = await paidOrder('Settled', parseEther('0.1'), fees);
    const sweepEnv = { TREASURY_ADDRESS_EVM: treasury, CHAIN_RPC_DEFAULT_BASE: `${base}/rpc`, CHAIN_RPC_URLS: '', ...platformKeyEnv(TEST_KEY_MNEMONIC) };

    const bad = await admin(['treasury:sweep', '--dry-run', '--order', done.order_no], { ...sweepEnv, TREASURY_ADDRESS_EVM: 'not-an-address' });
    expect(bad.code, 'the treasury is checked before anything is read').to.not.equal(0);
    expect(bad.out).to.include('TREASURY_ADDRESS_EVM');

    const dry = await admin(['treasury:sweep', '--dry-run', '--order', done.order_no], sweepEnv);
    expect(dry.code, dry.out).to.equal(0);
    expect(dry.out).to.include(`${done.order_no}\twould sweep\t500000000000000\tfrom ${done.deposit_address}\tto ${treasury}`);
    expect(await new OutgoingTransferRepository(db).listByOrder(done.id), 'a dry run signs nothing').to.deep.equal([]);

    const real = await admin(['treasury:sweep', '--order', done.order_no], sweepEnv);
    expect(real.code, real.out).to.equal(0);
    const line = real.out.split('\n').find((l) => l.startsWith(`${done.order_no}\tswept\t500000000000000\t`))!;
    const hash = line.split('\t')[3];
    await mined(hash);
    const tx = await rpc('eth_getTransactionByHash', [hash]);
    expect(tx).to.include({ from: done.deposit_address, to: treasury });
    expect(BigInt(tx.value)).to.equal(500_000_000_000_000n);

    const rerun = await admin(['treasury:sweep', '--order', done.order_no], sweepEnv);
    expect(rerun.code, rerun.out).to.equal(0);
    expect(rerun.out).to.not.include('\tswept\t');
    const [sweep, ...more] = await new OutgoingTransferRepository(db).listByOrder(done.id);
    expect(more).to.deep.equal([]);
    expect(sweep).to.include({ kind: 'sweep', tx_hash: hash });
  });
  it("gas:station prints the station's balance and address (the key of index 2^31 − 1) on each EVM chain and Tron, LOW under the configured level", async () => {
    const env = { TREASURY_ADDRESS_EVM: '0x' + '1'.repeat(40), CHAIN_RPC_DEFAULT_BASE: `${base}/rpc`, CHAIN_RPC_URLS: '', ...platformKeyEnv(TEST_KEY_MNEMONIC) };
    const ok = await admin(['gas:station'], env);
    expect(ok.code, ok.out).to.equal(0);
    const lines = ok.out.trim().split('\n').map((l) => l.split('\t'));
    expect(lines[0]).to.deep.equal(['index', '2147483647']);
    // the simulator funds a development account with 1000 ether (SIM_FUNDED_ACCOUNTS) and a Tron one with 1,000,000 TRX (SIM_FUNDED_TRON_ADDRESSES)
    expect(lines.find((l) => l[0] === 'ethereum')).to.deep.equal(['ethereum', String(1000n * 10n ** 18n), 'ok', station]);
    expect(lines.find((l) => l[0] === 'tron')).to.deep.equal(['tron', String(1_000_000n * 10n ** 6n), 'ok', tronStation]);
    const low = await admin(['gas:station'], { ...env, GAS_STATION_LOW_BALANCE_GWEI: String(2000 * 10 ** 9), GAS_STATION_LOW_BALANCE_TRX: String(2_000_000) });
    const lowLines = low.out.split('\n');
    expect(lowLines.find((l) => l.startsWith('ethereum\t'))).to.equal(`ethereum\t${1000n * 10n ** 18n}\tLOW\t${station}`);
    expect(lowLines.find((l) => l.startsWith('tron\t'))).to.equal(`tron\t${1_000_000n * 10n ** 6n}\tLOW\t${tronStation}`);
  });
});
