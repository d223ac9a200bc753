import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { networkByName } from '@chainpipe/chains';
import { TOPICS, type ChainTxMessage } from '@chainpipe/contracts';
import { createDb, type Knex } from '@chainpipe/db';
import { collectTopic, createRegistryTopics, freePort, parsePrometheusText, readFixtureJson, spawnTs, stopProcess, testEnv, uniquePrefix, waitFor, waitReady, type RunningProcess, type TopicCollector } from '@chainpipe/testing';
import { parseEvmPayload } from '@chainpipe/tx-parsers';
import { NO_BLOCK, storeBlock } from '@chainpipe/tx-store';

type Json = any;

/**
 * pending-compensator and chain-parser as real processes against Postgres and Kafka, with a
 * stand-in Ethereum node (JSON-RPC 2.0, as a real node answers) that knows two transactions
 * taken from a real block under fresh hashes: one mined (receipt status 0x1), one still in the
 * mempool. The compensator hands what the node says to chain-parser (chain.fetched.v1), which
 * stores and publishes it.
 */
describe('pending-compensator: pending transactions settled from the chain origin (real process)', function () {
  this.timeout(120_000);
  const env = testEnv();
  const network = networkByName('ethereum-mainnet')!;
  const ctx = { chainType: network.chainType, chainId: network.chainId, family: network.family, nativeSymbol: network.nativeSymbol, nativeDecimals: network.nativeDecimals };
  const unwrap = (v: Json) => (v && typeof v === 'object' && 'jsonrpc' in v ? v.result : v);
  const block: Json = unwrap(readFixtureJson('evm/eth-mainnet-13998626.block_fulltx.json'));
  const receipts: Json[] = unwrap(readFixtureJson('evm/eth-mainnet-13998626.receipts.json'));
  const fresh = () => `0x${randomBytes(32).toString('hex')}`;
  // A plain transfer of the block, mined, and a copy still waiting in the mempool.
  const source = block.transactions.find((t: Json) => receipts.find((r) => r.transactionHash === t.hash)?.status === '0x1')!;
  const minedHash = fresh();
  const waitingHash = fresh();
  const mined = { ...source, hash: minedHash };
  const waiting = { ...source, hash: waitingHash, blockHash: null, blockNumber: null, transactionIndex: null };
  const receipt = { ...receipts.find((r) => r.transactionHash === source.hash), transactionHash: minedHash };
  const header = { ...block, transactions: [minedHash] };

  let db: Knex;
  let node: http.Server;
  let app: RunningProcess | undefined;
  let parser: RunningProcess | undefined;
  let chainTx: TopicCollector;
  let prefix: string;

  before(async () => {
    db = createDb({ url: env.databaseUrl, poolMax: 2 });
    prefix = uniquePrefix('pc');
    await createRegistryTopics(prefix);
    chainTx = await collectTopic(prefix + TOPICS.chainTx.name);
    node = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        const m = JSON.parse(body);
        const result =
          m.method === 'eth_getTransactionByHash' ? (m.params[0] === minedHash ? mined : m.params[0] === waitingHash ? waiting : null)
          : m.method === 'eth_getTransactionReceipt' ? (m.params[0] === minedHash ? receipt : null)
          : m.method === 'eth_getBlockByNumber' ? (m.params[0] === block.number ? header : null)
          : undefined;
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify(result === undefined ? { jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'method not found' } } : { jsonrpc: '2.0', id: m.id, result }));
      });
    });
    await new Promise<void>((r) => node.listen(0, '127.0.0.1', r));
  });

  after(async () => {
    if (app) expect(await stopProcess(app), 'clean shutdown').to.equal(0);
    if (parser) expect(await stopProcess(parser), 'clean shutdown of chain-parser').to.equal(0);
    await chainTx?.stop();
    await new Promise((r) => node.close(r));
    await db?.destroy();
  });

  it('has chain-parser store the final status of a mined one and publish it to chain.tx.v1 once, and leaves a mempool one pending', async () => {
    // Both as chain-parser or an origin look-up stores a transaction seen without its block.
    const pending = [mined, waiting].map((t) => parseEvmPayload([{ ...t, blockHash: null, blockNumber: null, transactionIndex: null }], ctx).blocks[0].transactions[0]);
    expect(pending.map((t) => t.tx_status)).to.deep.equal(['pending', 'pending']);
    const { stored } = await storeBlock(db, { network, block: NO_BLOCK, transactions: pending });
    const [ops, parserOps] = [await freePort(), await freePort()];
    const port = (node.address() as AddressInfo).port;
    parser = spawnTs('apps/chain-parser/src/main.ts', {
      KAFKA_BROKERS: env.kafkaBrokers.join(','),
      KAFKA_TOPIC_PREFIX: prefix,
      DATABASE_URL: env.databaseUrl,
      OPS_PORT: String(parserOps),
      CHAIN_PARSER_GROUP: `${prefix}parser`,
    });
    await waitReady(parser, parserOps, 60_000);
    app = spawnTs('apps/pending-compensator/src/main.ts', {
      KAFKA_BROKERS: env.kafkaBrokers.join(','),
      KAFKA_TOPIC_PREFIX: prefix,
      DATABASE_URL: env.databaseUrl,
      OPS_PORT: String(ops),
      CHAIN_RPC_URLS: `ethereum-mainnet=http://127.0.0.1:${port}/`,
      CHAIN_RPC_DEFAULT_BASE: 'http://127.0.0.1:9/rpc',
      PENDING_CHECK_INTERVAL_MS: '200',
      PENDING_MIN_AGE_MS: '0',
    });
    await waitReady(app, ops, 60_000);
    const row = () => db('tx.transactions').where({ chain_type: 'ethereum', chain_id: 1 }).whereIn('tx_hash', [minedHash, waitingHash]).select('id', 'tx_hash', 'tx_status', 'height', 'block_hash');
    await waitFor(async () => (await row()).find((r) => r.tx_hash === minedHash)?.tx_status === 'success', { timeoutMs: 30_000, what: 'the mined transaction settled' });
    const rows = await row();
    const minedRow = rows.find((r) => r.tx_hash === minedHash)!;
    // What the receipt and block say: success, in block 13998626 at its hash.
    expect([minedRow.tx_status, Number(minedRow.height), minedRow.block_hash]).to.deep.equal(['success', Number(BigInt(block.number)), block.hash]);
    expect(String(minedRow.id), 'the row keeps its id').to.equal(stored[0].id);
    expect(rows.find((r) => r.tx_hash === waitingHash)!.tx_status).to.equal('pending');
    // Several more passes (every 200 ms): the settled one is published once, the waiting one never.
    const stillPending = async () =>
      parsePrometheusText(await (await fetch(`http://127.0.0.1:${ops}/metrics`)).text())
        .samples.filter((x) => x.name === 'chainpipe_pending_checks_total' && x.labels.outcome === 'still_pending')
        .reduce((n, x) => n + x.value, 0);
    const passesBefore = await stillPending();
    await waitFor(async () => (await stillPending()) >= passesBefore + 3, { timeoutMs: 15_000, what: 'three more passes over the waiting transaction' });
    const messages = (await chainTx.settled()).map((m) => JSON.parse(m.value!.toString()) as ChainTxMessage);
    const ours = messages.filter((m) => [minedHash, waitingHash].includes(m.tx.tx_hash));
    expect(ours.map((m) => [m.id, m.tx.tx_hash, m.tx.tx_status, m.tx.block_hash])).to.deep.equal([[stored[0].id, minedHash, 'success', block.hash]]);
    const metrics = await (await fetch(`http://127.0.0.1:${ops}/metrics`)).text();
    // A pass every 200 ms may find the row still pending before chain-parser stored the first
    // hand-over, and hands it over again: the merge turns that into nothing new (one message above).
    expect(metrics).to.match(/chainpipe_pending_checks_total\{outcome="settled"[^}]*\} [1-9]/);
    expect(metrics).to.match(/chainpipe_pending_checks_total\{outcome="still_pending"[^}]*\} [1-9]/);
  });
});
