import { randomBytes, randomInt } from 'node:crypto';
import { expect } from 'chai';
import { Registry } from 'prom-client';
import { parseEther, parseGwei } from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import { TOPICS, loadContracts } from '@chainpipe/contracts';
import { ApiKeyRepository, createDb, type Knex } from '@chainpipe/db';
import { TopicProducer, createKafka } from '@chainpipe/kafka';
import { OrderDepositRepository, OrderRepository } from '@chainpipe/order-store';
import { createLogger } from '@chainpipe/runtime';
import { MonitoredAddressRepository, changeMessages } from '@chainpipe/tx-store';
import {
  TEST_KEY_MNEMONIC, bitcoinWallet, createRegistryTopics, simBitcoin, freePort, spawnTs, stopProcess, testEnv, uniquePrefix, waitFor, waitReady, type RunningProcess,
} from '@chainpipe/testing';
import { evmBlockPaying } from './deposit-block';
import { orderFixture } from './order-fixtures';

/**
 * The simulator as a chain: a transfer signed here and sent with eth_sendRawTransaction is mined
 * by upstream-sim into a block that it posts to chain-ingest's /stream itself, and the deposit
 * reaches the order through chain-parser, tx-matcher and order-tracker, no block made by the test.
 * The same for Bitcoin: a payment mined by the simulated node, posted as the Blockbook block a
 * Bitcoin stream delivers.
 */
describe('upstream-sim as a chain: a signed deposit travels sim → /stream → chain-parser → tx-matcher → order-tracker', function () {
  this.timeout(180_000);
  const env = testEnv();
  const secret = randomBytes(12).toString('hex');
  const appId = `simchain-${randomBytes(3).toString('hex')}`;
  const payer = mnemonicToAccount(TEST_KEY_MNEMONIC, { addressIndex: 7 });
  const procs: RunningProcess[] = [];
  const logger = createLogger({ name: 'sim-chain-test', level: 'error' });
  let db: Knex;
  let simUrl = '';

  const rpc = async (method: string, params: unknown[]) => {
    const res = await fetch(`${simUrl}/rpc/ethereum-mainnet`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
    return (await res.json()) as { result?: any; error?: { code: number; message: string } };
  };

  let orderId = '';
  let depositAddress = '';
  const amount = parseEther('0.2345');
  const wallet = bitcoinWallet(TEST_KEY_MNEMONIC, 3);
  const btc = simBitcoin(() => simUrl);
  // a Bitcoin order's deposit address: an address of the test mnemonic outside the wallet's account
  // an address of this run's own: an unpaid order of an earlier run at the same address would make it shared
  const btcDeposit = bitcoinWallet(TEST_KEY_MNEMONIC, randomInt(4, 1_000_000)).address;
  const btcAmount = 1_234_567n;
  let btcOrderId = '';
  /** An order that only a forged block pays. */
  let forgedOrderId = '';
  let forgedAddress = '';
  const forgedAmount = parseEther('0.3');
  let ingestUrl = '';

  before(async () => {
    db = createDb({ url: env.databaseUrl, poolMax: 4 });
    const prefix = uniquePrefix('simchain');
    await createRegistryTopics(prefix);
    // The order and its monitored address exist before the matcher starts: it loads them at boot,
    // so the one deposit below cannot arrive before the matcher knows the address.
    const order = await new OrderRepository(db).insert(orderFixture({ amount_in: amount.toString() }));
    orderId = order.id;
    depositAddress = order.deposit_address;
    const btcOrder = await new OrderRepository(db).insert(orderFixture({ src_token_id: 1001, dst_token_id: 101, dst_address: '0x' + '22'.repeat(20), amount_in: btcAmount.toString(), deposit_chain_type: 'bitcoin', deposit_address: btcDeposit }));
    btcOrderId = btcOrder.id;
    const forged = await new OrderRepository(db).insert(orderFixture({ amount_in: forgedAmount.toString() }));
    forgedOrderId = forged.id;
    forgedAddress = forged.deposit_address;
    await new ApiKeyRepository(db).createApp(appId, 'sim chain test');
    const producer = new TopicProducer({ kafka: createKafka({ brokers: env.kafkaBrokers, clientId: 'sim-chain-test', logger }), contracts: loadContracts(), logger, registry: new Registry(), topicPrefix: prefix });
    await producer.connect();
    const changes = [{ chainType: 'ethereum' as const, adds: [depositAddress, forgedAddress], removes: [] }, { chainType: 'bitcoin' as const, adds: [btcDeposit], removes: [] }];
    await new MonitoredAddressRepository(db).apply(appId, changes, () => producer.publish(TOPICS.addressesChanges, changeMessages(appId, changes, Date.now()).map((value) => ({ value }))));
    await producer.disconnect();

    const common = { KAFKA_BROKERS: env.kafkaBrokers.join(','), KAFKA_TOPIC_PREFIX: prefix, DATABASE_URL: env.databaseUrl, REDIS_URL: env.redisUrl, REDIS_KEY_PREFIX: prefix, LOG_LEVEL: 'warn' };
    const [ingestPort, ingestOps, parserOps, matcherOps, trackerOps, simPort, simOps] = await Promise.all([freePort(), freePort(), freePort(), freePort(), freePort(), freePort(), freePort()]);
    simUrl = `http://127.0.0.1:${simPort}`;
    ingestUrl = `http://127.0.0.1:${ingestPort}`;
    procs.push(
      spawnTs('apps/chain-ingest/src/main.ts', { ...common, STREAM_SECRET: secret, PORT: String(ingestPort), OPS_PORT: String(ingestOps) }),
      spawnTs('apps/chain-parser/src/main.ts', { ...common, OPS_PORT: String(parserOps), CHAIN_PARSER_GROUP: `${prefix}parser` }),
      spawnTs('apps/tx-matcher/src/main.ts', { ...common, OPS_PORT: String(matcherOps), TX_MATCHER_GROUP: `${prefix}matcher`, TX_MATCHER_CHANGES_GROUP_PREFIX: `${prefix}changes`, TX_MATCHER_SESSION_TIMEOUT_MS: '6000' }),
      spawnTs('apps/order-tracker/src/main.ts', { ...common, OPS_PORT: String(trackerOps), CHAIN_RPC_DEFAULT_BASE: `${simUrl}/rpc`, ORDER_DEPOSIT_APP_ID: appId, ORDER_TRACKER_GROUP: `${prefix}tracker`, ORDER_TRACKER_SESSION_TIMEOUT_MS: '6000', ORDER_TRACKER_INTERVAL_MS: '500' }),
      spawnTs('apps/upstream-sim/src/main.ts', {
        PORT: String(simPort), OPS_PORT: String(simOps), LOG_LEVEL: 'warn', SIM_BLOCK_MS: '500', SIM_STREAM_URL: `http://127.0.0.1:${ingestPort}/stream`, STREAM_SECRET: secret, SIM_FUNDED_ACCOUNTS: payer.address,
        SIM_FUNDED_BITCOIN_ADDRESSES: wallet.address,
      }),
    );
    await Promise.all([waitReady(procs[0], ingestOps, 60_000), waitReady(procs[1], parserOps, 60_000), waitReady(procs[2], matcherOps, 60_000), waitReady(procs[3], trackerOps, 60_000), waitReady(procs[4], simOps, 60_000)]);
  });

  after(async () => {
    // The simulator first: it posts to chain-ingest until it stops.
    const exits: unknown[] = [];
    for (const p of [...procs].reverse()) exits.push(await stopProcess(p));
    expect(exits, 'clean exits').to.deep.equal(procs.map(() => 0));
    await db?.destroy();
  });

  it('a funded development account pays the order; the sim mines and posts the block; the order is paid by exactly that transaction', async () => {
    const nonce = Number((await rpc('eth_getTransactionCount', [payer.address, 'pending'])).result);
    const raw = await payer.signTransaction({ chainId: 1, type: 'eip1559', to: depositAddress as `0x${string}`, value: amount, nonce, gas: 21_000n, maxFeePerGas: parseGwei('20'), maxPriorityFeePerGas: parseGwei('1') });
    const sent = await rpc('eth_sendRawTransaction', [raw]);
    expect(sent.error).to.equal(undefined);
    const hash: string = sent.result;

    await waitFor(async () => (await rpc('eth_getTransactionReceipt', [hash])).result?.status === '0x1', { timeoutMs: 20_000, what: 'the transfer mined' });
    // a fresh address holds nothing until paid, as on a real chain: exactly the amount after
    expect(BigInt((await rpc('eth_getBalance', [depositAddress, 'latest'])).result), 'the deposit address holds the amount').to.equal(amount);

    const orders = new OrderRepository(db);
    await waitFor(async () => (await orders.findById(orderId))?.state === 'Exchanging', { timeoutMs: 90_000, what: 'the order paid through the pipeline' });
    const stored = (await orders.findById(orderId))!;
    expect(stored).to.include({ state: 'Exchanging', deposit_amount: amount.toString(), deposit_tx_hash: hash });
  });

  it('a funded Bitcoin wallet pays a Bitcoin order; the sim mines it and posts the Blockbook block; the order is paid by exactly that transaction', async () => {
    const txid = await btc.pay(wallet, btcDeposit, btcAmount);
    const orders = new OrderRepository(db);
    await waitFor(async () => (await orders.findById(btcOrderId))?.state === 'Exchanging', { timeoutMs: 90_000, what: 'the Bitcoin order paid through the pipeline' });
    expect(await orders.findById(btcOrderId)).to.include({ state: 'Exchanging', deposit_amount: btcAmount.toString(), deposit_tx_hash: txid });
  });

  it('a block the chain never had, posted to POST /webhook (no secret), paying an order in full: recorded, read from the node, and no order moves', async () => {
    const block = evmBlockPaying(forgedAddress, forgedAmount);
    // the webhook takes blocks without a secret (the spec): anyone can post one
    const res = await fetch(`${ingestUrl}/webhook`, { method: 'POST', headers: { 'cl-stream-network': 'ethereum-mainnet', 'content-type': 'application/octet-stream' }, body: block.body });
    expect(res.status).to.equal(200);
    const deposits = new OrderDepositRepository(db);
    // the push reached the tracker, which asked the simulated chain's node and was told it has no such transaction
    const seen = await waitFor(async () => (await deposits.ofOrder(forgedOrderId)).find((d) => d.tx_hash === block.txHash && d.checks > 0), { timeoutMs: 90_000, what: 'the forged deposit recorded and looked up' });
    expect(seen).to.include({ status: 'unverified', detail: 'unknown_to_node', amount: null });
    expect(await rpc('eth_getTransactionByHash', [block.txHash]), 'the node has no such transaction').to.deep.include({ result: null });
    // a few sweeps later still nothing moved
    await new Promise((r) => setTimeout(r, 1500));
    const order = (await new OrderRepository(db).findById(forgedOrderId))!;
    expect(order).to.include({ state: 'Depositing', deposit_tx_hash: null, deposit_amount: null });
    expect((await new OrderRepository(db).audit(forgedOrderId)).map((a) => a.event)).to.deep.equal(['created']);
  });
});
