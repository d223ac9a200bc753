import { expect } from 'chai';
import { BitcoinSender, MnemonicSigner, OutgoingTransfers } from '@chainpipe/custody';
import { createDb, type Knex } from '@chainpipe/db';
import { IntegratorRepository, OrderRepository, OutgoingTransferRepository, type NewOrder } from '@chainpipe/order-store';
import { thorchainLimitMemo } from '@chainpipe/orders';
import { bitcoinWallet, freePort, simBitcoin, spawnTs, stopProcess, suiteDatabase, TEST_KEY_MNEMONIC, testEnv, uniquePrefix, createRegistryTopics, waitFor, waitReady, type RunningProcess } from '@chainpipe/testing';
import { runTreasuryCommand } from '../../apps/admin/src/treasury-commands';
import { orderFixture } from './order-fixtures';

/**
 * Orders paid in Bitcoin on the real stack: Postgres, Kafka (the tracker's outbox), the
 * simulator as Bitcoin mainnet (its UTXO set checks every witness) and as THORChain (which
 * watches its BTC vault), the executor and tracker processes. The deposit is paid from the test
 * wallet to the order's P2WPKH deposit address; the forward spends it to the BTC vault with the
 * limit memo in an OP_RETURN output and the fees back to the deposit address; a refused swap is
 * refunded (principal − network fee); a kill before the broadcast re-sends the stored bytes;
 * the fees are swept to the Bitcoin treasury.
 */
const BTC = 1001;
const ETH = 101;
const DEST = '0x2222222222222222222222222222222222222222';
/** The simulator's fee rate (sat/vB) for this suite: fees are read off it. */
const FEE_RATE = 5n;

describe('Bitcoin-paid orders: forward to THORChain, refund, restart, sweep (real stack)', function () {
  this.timeout(240_000);
  const wallet = bitcoinWallet(TEST_KEY_MNEMONIC, 1);
  const signer = new MnemonicSigner(TEST_KEY_MNEMONIC);
  const procs: Record<string, RunningProcess> = {};
  let db: Knex;
  let orders: OrderRepository;
  let transfers: OutgoingTransferRepository;
  let base = '';
  let executorEnv: Record<string, string> = {};
  let integratorId = '';
  const btc = simBitcoin(() => base);
  const thornode = async (path: string) => (await (await fetch(`${base}/thornode${path}`)).json()) as any;
  const vault = async () => ((await thornode('/thorchain/inbound_addresses')) as { chain: string; address: string }[]).find((v) => v.chain === 'BTC')!.address;
  /** THORNode's output now for `sats` of BTC to ETH (1e8 units). */
  const quoted = async (sats: bigint) => BigInt((await thornode(`/thorchain/quote/swap?from_asset=BTC.BTC&to_asset=ETH.ETH&amount=${sats}`)).expected_amount_out);
  const sats = (btcAmount: number) => BigInt(Math.round(btcAmount * 1e8));
  // (the treasury of the sweep: account 7 of the test mnemonic, apart from the wallet and the deposit keys)

  let nextIndex = 2_000_000_000 + Math.floor(Math.random() * 100_000_000);
  /** A Bitcoin order (Exchanging) of a fresh deposit index, its deposit paid from the test wallet and mined. */
  const paidOrder = async (over: Partial<NewOrder>) => {
    const index = nextIndex++;
    const address = await signer.addressAt('utxo', index);
    const depositTx = await btc.pay(wallet, address, BigInt(over.amount_in!));
    const order = await orders.insert(
      orderFixture({
        src_token_id: BTC, dst_token_id: ETH, dst_address: DEST, deposit_chain_type: 'bitcoin', deposit_index: index, deposit_address: address,
        state: 'Exchanging', deposit_tx_hash: depositTx, deposit_amount: over.amount_in, deposited_at: new Date(), integrator_id: integratorId, ...over,
      } as Partial<NewOrder>),
    );
    return { order, address, depositTx };
  };
  const startExecutor = async () => {
    const ops = await freePort();
    procs.executor = spawnTs('apps/order-executor/src/main.ts', { ...executorEnv, OPS_PORT: String(ops) });
    await waitReady(procs.executor, ops, 60_000);
  };

  before(async () => {
    const databaseUrl = await suiteDatabase('bitcoin_flow');
    db = createDb({ url: databaseUrl, poolMax: 4 });
    orders = new OrderRepository(db);
    transfers = new OutgoingTransferRepository(db);
    integratorId = await new IntegratorRepository(db).createIntegrator('Bitcoin flow test');
    const prefix = uniquePrefix('btcflow');
    await createRegistryTopics(prefix);
    const [simPort, simOps, trackerOps] = await Promise.all([freePort(), freePort(), freePort()]);
    base = `http://127.0.0.1:${simPort}`;
    procs.sim = spawnTs('apps/upstream-sim/src/main.ts', {
      PORT: String(simPort), OPS_PORT: String(simOps), LOG_LEVEL: 'warn', SIM_BLOCK_MS: '300', SIM_THORCHAIN_SWAP_MS: '500', SIM_FUNDED_BITCOIN_ADDRESSES: wallet.address, SIM_BITCOIN_FEE_RATE_SAT_VB: String(FEE_RATE),
    });
    await waitReady(procs.sim, simOps, 60_000);
    const upstreams = { THORNODE_API_URL: `${base}/thornode`, CHANGENOW_API_URL: `${base}/changenow`, CHAIN_RPC_DEFAULT_BASE: `${base}/rpc`, CHAIN_RPC_URLS: '', DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' };
    executorEnv = { ...upstreams, ORDER_EXECUTOR_INTERVAL_MS: '300', ORDER_EXECUTOR_CONFIRMATIONS: 'bitcoin=1', BITCOIN_MIN_FEE_RATE_SAT_VB: '1' };
    procs.tracker = spawnTs('apps/order-tracker/src/main.ts', {
      ...upstreams, KAFKA_BROKERS: testEnv().kafkaBrokers.join(','), KAFKA_TOPIC_PREFIX: prefix, OPS_PORT: String(trackerOps), ORDER_TRACKER_GROUP: `${prefix}tracker`, ORDER_TRACKER_INTERVAL_MS: '300', ORDER_TRACKER_SESSION_TIMEOUT_MS: '6000',
    });
    await Promise.all([waitReady(procs.tracker, trackerOps, 60_000), startExecutor()]);
  });

  after(async () => {
    const exits: Record<string, unknown> = {};
    for (const name of ['executor', 'tracker', 'sim']) if (procs[name]) exits[name] = await stopProcess(procs[name]);
    await db?.destroy();
    expect(exits, 'clean exits').to.deep.equal({ executor: 0, tracker: 0, sim: 0 });
  });

  let settled: { orderId: string; address: string; index: number; feePlatform: bigint; feeIntegrator: bigint } | undefined;

  it('forwards exactly received − fee_platform − fee_integrator to the BTC vault with the limit memo in OP_RETURN, the rest back to the deposit address; THORChain swaps it: Settled', async () => {
    const amountIn = 5_000_000n; // 0.05 BTC
    const feePlatform = 15_000n;
    const feeIntegrator = 10_000n;
    const net = amountIn - feePlatform - feeIntegrator;
    // the limit in wei: 90 % of THORNode's quote now (1e8 units) scaled to 18 decimals
    const minOut = (((await quoted(net)) * 9n) / 10n) * 10n ** 10n;
    const { order, address, depositTx } = await paidOrder({ amount_in: amountIn.toString(), fee_platform: feePlatform.toString(), fee_integrator: feeIntegrator.toString(), min_acceptable_out: minOut.toString() });

    const forwardHash = await waitFor(async () => (await orders.findById(order.id))?.forward_tx_hash ?? undefined, { timeoutMs: 30_000, what: 'the forward recorded on the order' });
    const tx = await btc.mined(forwardHash);
    const memo = thorchainLimitMemo('ETH.ETH', DEST, minOut, 18);
    // read off the chain: the deposit spent, the net to the vault, the memo, the change home
    expect(tx.vin.map((i: any) => i.txid)).to.deep.equal([depositTx]);
    expect(tx.vout.map((o: any) => o.scriptPubKey.type)).to.deep.equal(['witness_v0_keyhash', 'nulldata', 'witness_v0_keyhash']);
    expect(tx.vout[0].scriptPubKey.address).to.equal(await vault());
    expect(sats(tx.vout[0].value), 'the net amount').to.equal(net);
    expect(Buffer.from(tx.vout[1].scriptPubKey.hex.slice(4), 'hex').toString('utf8'), 'the memo after OP_RETURN and its push length').to.equal(memo);
    expect(tx.vout[2].scriptPubKey.address).to.equal(address);
    const change = sats(tx.vout[2].value);
    const networkFee = amountIn - net - change;
    // the fee at the node's rate, on the size estimated before signing (a signature may be a byte shorter)
    expect(networkFee >= FEE_RATE * BigInt(tx.vsize) && networkFee <= FEE_RATE * BigInt(tx.vsize + 1), `fee ${networkFee} for ${tx.vsize} vB`).to.equal(true);
    expect(change, 'the fees stay at the deposit address, less the network fee').to.equal(feePlatform + feeIntegrator - networkFee);

    const [stored] = await transfers.listByOrder(order.id);
    expect(stored).to.include({ kind: 'forward', chain_type: 'bitcoin', tx_hash: forwardHash, amount: net.toString(), nonce: null });
    expect((await orders.findById(order.id))!.execution).to.include({ forward_tx_hash: forwardHash, memo, vault: await vault(), net: net.toString() });

    await waitFor(async () => (await orders.findById(order.id))?.state === 'Settled', { timeoutMs: 30_000, what: 'Completed by THORChain, then settled' });
    expect((await orders.audit(order.id)).map((a) => [a.event, a.to_state])).to.deep.equal([['created', 'Exchanging'], ['forwarded', 'Exchanging'], ['channel_status', 'Completed'], ['settle', 'Settled']]);
    expect(await orders.ledgerOf(order.id)).to.include({ amount: feeIntegrator.toString(), state: 'Available' });
    settled = { orderId: order.id, address, index: order.deposit_index!, feePlatform, feeIntegrator };
  });

  it('a ChangeNOW order: a fixed-rate exchange of exactly the net amount, paid by a plain transfer to its BTC payin address (no memo); ChangeNOW sees the payin and finishes: Settled', async () => {
    const changenow = (await db('agg.channels').where({ adapter_kind: 'changenow' }).first('id')) as { id: number };
    const amountIn = 4_000_000n;
    const feePlatform = 12_000n;
    const net = amountIn - feePlatform;
    const { order, address } = await paidOrder({ channel_id: changenow.id, channel_kind: 'changenow', provider_order_id: `made-with-the-order-${nextIndex}`, amount_in: amountIn.toString(), fee_platform: feePlatform.toString(), min_acceptable_out: '1' } as Partial<NewOrder>);
    const forwardHash = await waitFor(async () => (await orders.findById(order.id))?.forward_tx_hash ?? undefined, { timeoutMs: 30_000, what: 'the forward recorded on the order' });
    const execution = (await orders.findById(order.id))!.execution as Record<string, string>;
    const tx = await btc.mined(forwardHash);
    // the payin and the change home; no OP_RETURN output
    expect(tx.vout.map((o: any) => [o.scriptPubKey.address, o.scriptPubKey.type])).to.deep.equal([[execution.payin_address, 'witness_v0_keyhash'], [address, 'witness_v0_keyhash']]);
    expect(sats(tx.vout[0].value), 'the net amount').to.equal(net);
    const exchange = (await (await fetch(`${base}/changenow/v2/exchange/by-id?id=${execution.provider_order_id}`, { headers: { 'x-changenow-api-key': 'test' } })).json()) as Record<string, unknown>;
    expect(exchange).to.include({ flow: 'fixed-rate', fromNetwork: 'btc', refundAddress: address });
    await waitFor(async () => (await orders.findById(order.id))?.state === 'Settled', { timeoutMs: 30_000, what: 'finished by ChangeNOW, then settled' });
    const seen = (await (await fetch(`${base}/changenow/v2/exchange/by-id?id=${execution.provider_order_id}`, { headers: { 'x-changenow-api-key': 'test' } })).json()) as Record<string, unknown>;
    expect(seen).to.include({ status: 'finished', amountFrom: Number(net) / 1e8 });
  });

  it('a fresh quote under the minimum forwards nothing: SlippageFailed, then a refund of principal − network fee (one input, two P2WPKH outputs: 141 vB) to the refund address: Refunded', async () => {
    const amountIn = 3_000_000n;
    const net = amountIn - 9_000n;
    const above = (await quoted(net)) * 2n * 10n ** 10n;
    const refundTo = 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4';
    const { order, address, depositTx } = await paidOrder({ amount_in: amountIn.toString(), fee_platform: '9000', min_acceptable_out: above.toString(), refund_address: refundTo } as Partial<NewOrder>);
    const refunded = await waitFor(async () => {
      const o = (await orders.findById(order.id))!;
      return o.state === 'Refunded' ? o : undefined;
    }, { timeoutMs: 30_000, what: 'SlippageFailed, then Refunded' });
    expect(refunded.forward_tx_hash, 'nothing forwarded').to.equal(null);
    expect((await orders.audit(order.id)).map((a) => [a.event, a.to_state])).to.deep.equal([['created', 'Exchanging'], ['forward_refused', 'SlippageFailed'], ['refund_sent', 'Refunded']]);
    const [refund, ...others] = await transfers.listByOrder(order.id);
    expect(others).to.deep.equal([]);
    expect(refund).to.include({ kind: 'refund', status: 'confirmed', tx_hash: refunded.refund_tx_hash, to_address: refundTo });

    const tx = await btc.mined(refunded.refund_tx_hash!);
    expect(tx.vin.map((i: any) => i.txid)).to.deep.equal([depositTx]);
    // the fee planned for the refund address and change outputs: 141 vB × 5 sat/vB = 705 sat; nothing
    // is left for change (the principal is all the address holds), so the only output is the refund
    expect(tx.vout.map((o: any) => [o.scriptPubKey.address, sats(o.value)])).to.deep.equal([[refundTo, amountIn - 705n]]);
    expect((await btc.rpc('scantxoutset', ['start', [`addr(${address})`]])).unspents, 'the deposit address is empty').to.deep.equal([]);
  });

  it('an executor killed after storing the forward, before any broadcast reached the node, broadcasts the stored bytes after its restart: one forward, its txid', async () => {
    const refuse = (on: boolean) => fetch(`${base}/sim/chain/bitcoin-mainnet/broadcasts`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ refuse: on }) });
    const amountIn = 2_000_000n;
    const net = amountIn - 6_000n;
    const minOut = (((await quoted(net)) * 9n) / 10n) * 10n ** 10n;
    const index = nextIndex++;
    const address = await signer.addressAt('utxo', index);
    const depositTx = await btc.pay(wallet, address, amountIn);
    await refuse(true);
    let orderId = '';
    try {
      const order = await orders.insert(
        orderFixture({ src_token_id: BTC, dst_token_id: ETH, dst_address: DEST, deposit_chain_type: 'bitcoin', deposit_index: index, deposit_address: address, amount_in: amountIn.toString(), fee_platform: '6000', min_acceptable_out: minOut.toString(), state: 'Exchanging', deposit_tx_hash: depositTx, deposit_amount: amountIn.toString(), deposited_at: new Date() } as Partial<NewOrder>),
      );
      orderId = order.id;
      await waitFor(async () => (await transfers.find(orderId, 'forward'))?.status === 'signed', { timeoutMs: 30_000, what: 'the forward stored, not broadcast' });
      procs.executor.kill('SIGKILL');
      await procs.executor.exited;
    } finally {
      await refuse(false);
    }
    const stored = (await transfers.find(orderId, 'forward'))!;
    await btc.rpc('getrawtransaction', [stored.tx_hash, true]).then(
      () => expect.fail('the forward reached the node before the restart'),
      (err: Error) => expect(err.message).to.match(/No such mempool or blockchain transaction/),
    );
    await startExecutor();
    await waitFor(async () => (await orders.findById(orderId))?.forward_tx_hash ?? undefined, { timeoutMs: 30_000, what: 'the forward recorded after the restart' });
    expect((await orders.findById(orderId))!.forward_tx_hash, 'the stored transaction, not a new one').to.equal(stored.tx_hash);
    const tx = await btc.mined(stored.tx_hash);
    expect(tx.hex).to.equal(stored.raw_tx);
    expect(sats(tx.vout[0].value)).to.equal(net);
    expect(await transfers.listByOrder(orderId)).to.have.length(1);
  });

  it("BitcoinSender's broadcast outcomes against the node: accepted (again while pooled), known once mined, replaced once another transaction spent its input; receipts count confirmations", async () => {
    const index = nextIndex++;
    const from = { index, address: await signer.addressAt('utxo', index) };
    await btc.pay(wallet, from.address, 500_000n);
    const sender = new BitcoinSender({ url: `${base}/rpc/bitcoin-mainnet`, timeoutMs: 5000, confTarget: 2, minFeeRate: 1n }, signer);
    const shop = 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4';
    // two transactions spending the same output: only one can ever be mined
    const first = await sender.sign(from, { to: shop, value: 100_000n });
    const rival = await sender.sign(from, { to: shop, value: 200_000n });
    expect(first.nonce).to.equal(null);
    expect(await sender.receipt(first.hash)).to.deep.equal({ mined: false });
    expect(await sender.broadcast(first.raw, first.hash)).to.equal('accepted');
    // Core answers a transaction already in its pool with its txid again
    expect(await sender.broadcast(first.raw, first.hash), 'pooled').to.equal('accepted');
    expect(await sender.broadcast(rival.raw, rival.hash), 'its input taken by a pooled transaction').to.equal('replaced');
    const mined = await btc.mined(first.hash);
    expect(await sender.broadcast(first.raw, first.hash), 'mined').to.equal('known');
    expect(await sender.broadcast(rival.raw, rival.hash), 'its input spent in a block').to.equal('replaced');
    const header = await btc.rpc('getblockheader', [mined.blockhash, true]);
    expect(await sender.receipt(first.hash)).to.deep.include({ mined: true, success: true, blockNumber: header.height });
    await waitFor(async () => ((await sender.receipt(first.hash)) as { confirmations?: number }).confirmations! >= 2, { timeoutMs: 10_000, what: 'a second confirmation' });
    // what is left at the address: the change of the first transfer
    expect(mined.vout[1].scriptPubKey.address).to.equal(from.address);
    expect(await sender.balanceOf(from.address)).to.equal(sats(mined.vout[1].value));
  });

  it('treasury:sweep moves what the settled order left at its deposit address, less the network fee of 141 vB, to the Bitcoin treasury, once', async () => {
    expect(settled, 'the forward test settled an order').to.not.equal(undefined);
    const { orderId, address } = settled!;
    const order = (await orders.findById(orderId))!;
    const [held] = (await btc.rpc('scantxoutset', ['start', [`addr(${address})`]])).unspents.map((u: any) => sats(u.amount));
    const treasury = bitcoinWallet(TEST_KEY_MNEMONIC, 7).address;
    const sender = new BitcoinSender({ url: `${base}/rpc/bitcoin-mainnet`, timeoutMs: 5000, confTarget: 2, minFeeRate: 1n }, signer);
    const chain = (chainType: string) => (chainType === 'bitcoin' ? sender : undefined);
    const outgoing = new OutgoingTransfers({ store: transfers, chain, confirmations: () => 1 });
    const out: string[] = [];
    const deps = { db, transfers: outgoing, chains: chain, treasuryEvm: '0x' + '11'.repeat(20), treasuryUtxo: treasury };
    expect(await runTreasuryCommand(['treasury:sweep', '--order', order.order_no], deps, { out: (l) => void out.push(l) }), out.join('\n')).to.equal(0);
    const sweep = (await transfers.find(orderId, 'sweep'))!;
    // the fees exceed what is left after the forward's network fee: all of it goes, less 141 vB × 5 sat/vB
    expect(sweep).to.include({ to_address: treasury, amount: (held - 705n).toString() });
    const tx = await btc.mined(sweep.tx_hash);
    expect(tx.vout.map((o: any) => [o.scriptPubKey.address, sats(o.value)])).to.deep.equal([[treasury, held - 705n]]);
    // a second run sends nothing new (it shows the stored sweep, or skips the order once the executor saw it confirmed)
    const again: string[] = [];
    await runTreasuryCommand(['treasury:sweep', '--order', order.order_no], deps, { out: (l) => void again.push(l) });
    expect(again.join('\n')).to.match(/already sent|from 0 orders/);
    expect((await transfers.listByOrder(orderId)).filter((t) => t.kind === 'sweep')).to.have.length(1);
  });
});
