import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { Registry } from 'prom-client';
import { parseEther, parseGwei } from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import { tronHexToBase58 } from '@chainpipe/chains';
import { TOPICS, loadContracts } from '@chainpipe/contracts';
import { MnemonicSigner } from '@chainpipe/custody';
import { ApiKeyRepository, createDb, type Knex } from '@chainpipe/db';
import { TopicProducer, createKafka } from '@chainpipe/kafka';
import { createLogger } from '@chainpipe/runtime';
import { MonitoredAddressRepository, changeMessages } from '@chainpipe/tx-store';
import {
  TEST_KEY_MNEMONIC, bitcoinWallet, collectTopic, createRegistryTopics, simBitcoin, simTron, freePort, spawnTs, stopProcess, testEnv, uniquePrefix, waitFor, waitReady, type RunningProcess, type TopicCollector,
} from '@chainpipe/testing';

/**
 * A chain reorganisation through the pipeline, on Ethereum, Bitcoin and Tron: a deposit to a
 * monitored address is mined by the simulated chain, posted by its streamer, stored and pushed;
 * then the simulator replaces the blocks from the deposit's up (`POST /sim/chain/{network}/reorg`,
 * the transaction back in the pool) and re-delivers the new blocks with `blocks_reorged` and `reorgs`, as QuickNode does.
 * The pipeline orphans the deposit of the displaced block (an orphaned push), and pushes it again
 * from the block that mined it on the new branch (`is_reorg_resend`).
 */
describe('upstream-sim reorgs through the pipeline: sim → /stream (blocks_reorged) → chain-parser → tx-matcher → tx.push.v1', function () {
  this.timeout(180_000);
  const env = testEnv();
  const secret = randomBytes(12).toString('hex');
  const appId = `simreorg-${randomBytes(3).toString('hex')}`;
  const payer = mnemonicToAccount(TEST_KEY_MNEMONIC, { addressIndex: 8 });
  const deposit = `0x${randomBytes(20).toString('hex')}`;
  const amount = parseEther('0.125');
  const wallet = bitcoinWallet(TEST_KEY_MNEMONIC, 5);
  // a Bitcoin deposit address of this run's own
  const btcDeposit = bitcoinWallet(TEST_KEY_MNEMONIC, 100 + Math.floor(Math.random() * 1_000_000)).address;
  const btc = simBitcoin(() => simUrl);
  const signer = new MnemonicSigner(TEST_KEY_MNEMONIC);
  const tron = simTron(() => simUrl, signer);
  let tronPayer = { index: 23, address: '' };
  const tronDeposit = tronHexToBase58(`41${randomBytes(20).toString('hex')}`)!;
  const procs: RunningProcess[] = [];
  const logger = createLogger({ name: 'sim-reorg-test', level: 'error' });
  let db: Knex;
  let simUrl = '';
  let pushes: TopicCollector;

  const pushesOfTx = (hash: string) => pushes.messages.map((m) => JSON.parse(m.value!.toString())).filter((p) => p.app_id === appId && p.tx?.tx_hash === hash);
  /** Replaces every block of `network` from `height` up; the chain goes on producing, so the tip may move before the call lands. */
  const reorgFrom = async (network: string, height: number, tip: () => Promise<number>) => {
    const once = async () => {
      const res = await fetch(`${simUrl}/sim/chain/${network}/reorg`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ depth: (await tip()) - height + 1, requeue: true }) });
      expect(res.status).to.equal(200);
      return ((await res.json()) as { displaced: { number: number; hash: string; timestamp: number }[] }).displaced;
    };
    const displaced = await once();
    return displaced[0].number === height ? displaced : once();
  };

  const rpc = async (method: string, params: unknown[]) => {
    const res = await fetch(`${simUrl}/rpc/ethereum-mainnet`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
    const body = (await res.json()) as { result?: any; error?: { message: string } };
    if (body.error) throw new Error(`${method}: ${body.error.message}`);
    return body.result;
  };

  before(async () => {
    db = createDb({ url: env.databaseUrl, poolMax: 2 });
    tronPayer = { index: 23, address: await signer.addressAt('tvm', 23) };
    const prefix = uniquePrefix('simreorg');
    await createRegistryTopics(prefix);
    await new ApiKeyRepository(db).createApp(appId, 'sim reorg test');
    // the monitored address exists before the matcher starts: it loads it at boot
    const producer = new TopicProducer({ kafka: createKafka({ brokers: env.kafkaBrokers, clientId: 'sim-reorg-test', logger }), contracts: loadContracts(), logger, registry: new Registry(), topicPrefix: prefix });
    await producer.connect();
    const changes = [{ chainType: 'ethereum' as const, adds: [deposit], removes: [] }, { chainType: 'bitcoin' as const, adds: [btcDeposit], removes: [] }, { chainType: 'tron' as const, adds: [tronDeposit], removes: [] }];
    await new MonitoredAddressRepository(db).apply(appId, changes, () => producer.publish(TOPICS.addressesChanges, changeMessages(appId, changes, Date.now()).map((value) => ({ value }))));
    await producer.disconnect();
    pushes = await collectTopic(`${prefix}${TOPICS.txPush.name}`);

    const common = { KAFKA_BROKERS: env.kafkaBrokers.join(','), KAFKA_TOPIC_PREFIX: prefix, DATABASE_URL: env.databaseUrl, REDIS_URL: env.redisUrl, REDIS_KEY_PREFIX: prefix, LOG_LEVEL: 'warn' };
    const [ingestPort, ingestOps, parserOps, matcherOps, simPort, simOps] = await Promise.all([freePort(), freePort(), freePort(), freePort(), freePort(), freePort()]);
    simUrl = `http://127.0.0.1:${simPort}`;
    procs.push(
      spawnTs('apps/chain-ingest/src/main.ts', { ...common, STREAM_SECRET: secret, PORT: String(ingestPort), OPS_PORT: String(ingestOps) }),
      spawnTs('apps/chain-parser/src/main.ts', { ...common, OPS_PORT: String(parserOps), CHAIN_PARSER_GROUP: `${prefix}parser` }),
      spawnTs('apps/tx-matcher/src/main.ts', { ...common, OPS_PORT: String(matcherOps), TX_MATCHER_GROUP: `${prefix}matcher`, TX_MATCHER_CHANGES_GROUP_PREFIX: `${prefix}changes`, TX_MATCHER_SESSION_TIMEOUT_MS: '6000' }),
      spawnTs('apps/upstream-sim/src/main.ts', { PORT: String(simPort), OPS_PORT: String(simOps), LOG_LEVEL: 'warn', SIM_BLOCK_MS: '400', SIM_STREAM_URL: `http://127.0.0.1:${ingestPort}/stream`, STREAM_SECRET: secret, SIM_FUNDED_ACCOUNTS: payer.address, SIM_FUNDED_BITCOIN_ADDRESSES: wallet.address, SIM_FUNDED_TRON_ADDRESSES: tronPayer.address }),
    );
    await Promise.all([waitReady(procs[0], ingestOps, 60_000), waitReady(procs[1], parserOps, 60_000), waitReady(procs[2], matcherOps, 60_000), waitReady(procs[3], simOps, 60_000)]);
  });

  after(async () => {
    await pushes?.stop();
    // the simulator first: it posts to chain-ingest until it stops
    const exits: unknown[] = [];
    for (const p of [...procs].reverse()) exits.push(await stopProcess(p));
    expect(exits, 'clean exits').to.deep.equal(procs.map(() => 0));
    await db?.destroy();
  });

  it('the deposit is pushed, orphaned with its displaced block, and pushed again from its block on the new branch; the address holds the amount once', async () => {
    const raw = await payer.signTransaction({ chainId: 1, type: 'eip1559', to: deposit as `0x${string}`, value: amount, nonce: 0, gas: 21_000n, maxFeePerGas: parseGwei('20'), maxPriorityFeePerGas: parseGwei('1') });
    const hash: string = await rpc('eth_sendRawTransaction', [raw]);
    const first = await waitFor(async () => (await rpc('eth_getTransactionReceipt', [hash])) ?? undefined, { timeoutMs: 20_000, what: 'the deposit mined' });
    const pushesOf = () => pushesOfTx(hash);
    await waitFor(() => pushesOf().length > 0 || undefined, { timeoutMs: 90_000, what: 'the push of the deposit' });
    expect(pushesOf()[0]).to.deep.include({ orphaned: false, is_reorg_resend: false, listen_address: [deposit] });
    expect(pushesOf()[0].tx).to.include({ block_hash: first.blockHash });

    // every block from the deposit's up is replaced
    const displaced = await reorgFrom('ethereum-mainnet', Number(first.blockNumber), async () => Number(await rpc('eth_blockNumber', [])));
    expect(displaced[0]).to.include({ number: Number(first.blockNumber), hash: first.blockHash });

    const again = await waitFor(async () => {
      const r = await rpc('eth_getTransactionReceipt', [hash]);
      return r && r.blockHash !== first.blockHash ? r : undefined;
    }, { timeoutMs: 20_000, what: 'the deposit mined again on the new branch' });
    expect(Number(again.blockNumber), 'one height past the replaced blocks').to.equal(displaced[displaced.length - 1].number + 1);
    expect(BigInt(await rpc('eth_getBalance', [deposit, 'latest'])), 'the amount once, not twice').to.equal(amount);

    await waitFor(() => pushesOf().some((p) => !p.orphaned && p.tx.block_hash === again.blockHash) || undefined, { timeoutMs: 90_000, what: 'the push from the new block' });
    const seen = pushesOf();
    const orphanedAt = seen.findIndex((p) => p.orphaned === true);
    const resentAt = seen.findIndex((p) => !p.orphaned && p.tx.block_hash === again.blockHash);
    expect(orphanedAt, 'an orphaned push of the displaced block').to.be.greaterThan(0);
    expect(seen[orphanedAt].tx).to.include({ block_hash: first.blockHash });
    expect(seen[resentAt]).to.deep.include({ is_reorg_resend: true, orphaned: false });
    expect(seen[resentAt].tx).to.include({ height: Number(again.blockNumber) });
    expect(orphanedAt).to.be.lessThan(resentAt);
  });

  it('a Bitcoin deposit through a reorg: its block replaced by another miner, the payment back in the mempool and mined one height on; orphaned, then pushed again (is_reorg_resend)', async () => {
    const txid = await btc.pay(wallet, btcDeposit, 1_500_000n);
    const first = (await btc.rpc('getrawtransaction', [txid, true])) as { blockhash: string };
    const height = ((await btc.rpc('getblockheader', [first.blockhash])) as { height: number }).height;
    await waitFor(() => pushesOfTx(txid).length > 0 || undefined, { timeoutMs: 90_000, what: 'the push of the Bitcoin deposit' });
    expect(pushesOfTx(txid)[0]).to.deep.include({ orphaned: false, is_reorg_resend: false });

    const displaced = await reorgFrom('bitcoin-mainnet', height, async () => Number(await btc.rpc('getblockcount', [])));
    expect(displaced[0]).to.include({ number: height, hash: first.blockhash });
    const again = await waitFor(async () => {
      const tx = (await btc.rpc('getrawtransaction', [txid, true])) as { blockhash?: string };
      return tx.blockhash && tx.blockhash !== first.blockhash ? tx : undefined;
    }, { timeoutMs: 20_000, what: 'the payment mined again on the new branch' });
    const unspent = (await btc.rpc('scantxoutset', ['start', [`addr(${btcDeposit})`]])) as { unspents: { txid: string; amount: number }[] };
    expect(unspent.unspents.map((u) => [u.txid, u.amount]), 'paid once').to.deep.equal([[txid, 0.015]]);

    await waitFor(() => pushesOfTx(txid).some((p) => !p.orphaned && p.tx.block_hash === again.blockhash) || undefined, { timeoutMs: 90_000, what: 'the push from the new block' });
    const seen = pushesOfTx(txid);
    const orphanedAt = seen.findIndex((p) => p.orphaned === true);
    const resentAt = seen.findIndex((p) => !p.orphaned && p.tx.block_hash === again.blockhash);
    expect(orphanedAt, 'an orphaned push of the displaced block').to.be.greaterThan(0);
    expect(seen[resentAt]).to.deep.include({ is_reorg_resend: true });
    expect(orphanedAt).to.be.lessThan(resentAt);
  });

  it('a Tron deposit through a reorg: its block replaced, the transfer back in the pool and executed one number on; orphaned, then pushed again (is_reorg_resend), paid once', async () => {
    const txId = await tron.pay(tronPayer, tronDeposit, 25_000_000n);
    const first = await tron.mined(txId);
    const firstBlock = await tron.wallet('getblockbynum', { num: first.blockNumber });
    await waitFor(() => pushesOfTx(txId).length > 0 || undefined, { timeoutMs: 90_000, what: 'the push of the Tron deposit' });
    expect(pushesOfTx(txId)[0]).to.deep.include({ orphaned: false, is_reorg_resend: false });

    const displaced = await reorgFrom('tron-mainnet', first.blockNumber, async () => (await tron.wallet('getnowblock', {})).block_header.raw_data.number);
    expect(displaced[0]).to.include({ number: first.blockNumber, hash: firstBlock.blockID });
    const again = await waitFor(async () => {
      const info = await tron.wallet('gettransactioninfobyid', { value: txId });
      return typeof info.blockNumber === 'number' && info.blockNumber !== first.blockNumber ? info : undefined;
    }, { timeoutMs: 20_000, what: 'the transfer executed again on the new branch' });
    expect(again.blockNumber).to.equal(displaced[displaced.length - 1].number + 1);
    expect(BigInt((await tron.wallet('getaccount', { address: tronDeposit, visible: true })).balance), 'paid once').to.equal(25_000_000n);
    const againId = (await tron.wallet('getblockbynum', { num: again.blockNumber })).blockID;

    await waitFor(() => pushesOfTx(txId).some((p) => !p.orphaned && p.tx.height === again.blockNumber) || undefined, { timeoutMs: 90_000, what: 'the push from the new block' });
    const seen = pushesOfTx(txId);
    const orphanedAt = seen.findIndex((p) => p.orphaned === true);
    const resentAt = seen.findIndex((p) => !p.orphaned && p.tx.height === again.blockNumber);
    expect(orphanedAt, 'an orphaned push of the displaced block').to.be.greaterThan(0);
    expect(seen[resentAt]).to.deep.include({ is_reorg_resend: true });
    expect(String(seen[resentAt].tx.block_hash).replace(/^0x/, '')).to.equal(againId);
    expect(orphanedAt).to.be.lessThan(resentAt);
  });
});
