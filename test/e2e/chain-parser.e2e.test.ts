import { randomInt } from 'node:crypto';
import { expect } from 'chai';
import type { KafkaMessage } from 'kafkajs';
import { TOPICS, dlqName, type ChainTxMessage } from '@chainpipe/contracts';
import { createDb, type Knex } from '@chainpipe/db';
import {
  bitcoinBlockItem,
  collectTopic,
  createRegistryTopics,
  datasetOf,
  evmBlockItem,
  FIXTURE_NETWORKS,
  type FixtureFamily,
  freePort,
  groupCaughtUp,
  parsePrometheusText,
  randomSuffix,
  readTopic,
  rebaseBlock,
  type Rebased,
  replaceStrings,
  type RunningProcess,
  solanaBlockItem,
  spawnTs,
  stopProcess,
  streamerBody,
  testEnv,
  tronBlockItem,
  uniquePrefix,
  waitFor,
  waitReady,
  withSuffix,
  type TopicCollector,
} from '@chainpipe/testing';
import { scannedMetricTypes } from '../contracts/metrics-scan';

type Json = any;

/**
 * The write path end to end with real processes: chain-ingest (POST /stream → chain.raw.v1) and
 * chain-parser (chain.raw.v1 → Postgres → chain.tx.v1) on the test broker and database.
 *
 * Isolation: topics and the consumer group carry a unique prefix. Networks must be real (the
 * ingest refuses others), and other tests may store the same fixtures in the shared database, so
 * every block posted here is rebased first: a run-specific height (above 3e9) and every block and
 * transaction hash ending in a run-specific 6-character suffix (see rebaseBlock). Rows are then
 * looked up by those hashes only. Expected values are read from the fixture JSON.
 */
describe('chain-parser end to end: chain-ingest → chain.raw → chain-parser → Postgres + chain.tx (real processes)', () => {
  const secret = `secret-${randomSuffix()}`;
  let prefix: string;
  let db: Knex;
  let ingest: RunningProcess;
  let parser: RunningProcess;
  let ingestPort: number;
  let parserOps: number;
  let ingestOps: number;
  let heightBase: number;
  let heightOffset = 0;
  /** chain.tx.v1 messages this describe block has caused so far (tests run in order). */
  let expectedMessages = 0;
  let txReader: TopicCollector | undefined;
  const txMessages = (): KafkaMessage[] => txReader?.messages ?? [];

  before(async function () {
    this.timeout(90_000);
    prefix = uniquePrefix('cp');
    heightBase = 3_000_000_000 + randomInt(1_000_000_000);
    await createRegistryTopics(prefix);
    db = createDb({ url: testEnv().databaseUrl, poolMax: 3 });
    const kafkaEnv = { KAFKA_BROKERS: testEnv().kafkaBrokers.join(','), KAFKA_TOPIC_PREFIX: prefix };
    ingestPort = await freePort();
    ingestOps = await freePort();
    parserOps = await freePort();
    ingest = spawnTs('apps/chain-ingest/src/main.ts', { ...kafkaEnv, STREAM_SECRET: secret, PORT: String(ingestPort), OPS_PORT: String(ingestOps) });
    parser = spawnTs('apps/chain-parser/src/main.ts', {
      ...kafkaEnv,
      DATABASE_URL: testEnv().databaseUrl,
      OPS_PORT: String(parserOps),
      CHAIN_PARSER_GROUP: `${prefix}chain-parser`,
      DB_POOL_MAX: '4',
    });
    txReader = await collectTopic(prefix + TOPICS.chainTx.name);
    await Promise.all([waitReady(ingest, ingestOps, 60_000), waitReady(parser, parserOps, 60_000)]);
  });

  after(async function () {
    this.timeout(60_000);
    const codes = await Promise.all([ingest, parser].filter(Boolean).map((p) => stopProcess(p)));
    await txReader?.stop();
    await db?.destroy();
    expect(codes, 'both apps shut down cleanly').to.deep.equal([0, 0]);
    expect(parser.output()).to.match(/"msg":"shutdown_complete","exitCode":0/);
  });

  const rawDlq = () => dlqName(prefix + TOPICS.chainRaw.name);

  async function post(network: string, body: string | Buffer, extraHeaders: Record<string, string> = {}): Promise<void> {
    const res = await fetch(`http://127.0.0.1:${ingestPort}/stream`, {
      method: 'POST',
      headers: { 'content-secret-x': secret, 'cl-stream-network': network, 'content-type': 'application/json', ...extraHeaders },
      body,
    });
    expect(res.status, await res.clone().text()).to.equal(200);
  }

  /** chain-parser's metrics now: the sum of a metric's samples matching `labels`. */
  async function parserMetrics(): Promise<(name: string, labels: Record<string, string>) => number> {
    const text = await (await fetch(`http://127.0.0.1:${parserOps}/metrics`)).text();
    const samples = parsePrometheusText(text).samples;
    return (name, labels) => samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)).reduce((n, s) => n + s.value, 0);
  }

  /** A fixture block under this run's next height and a fresh hash suffix. */
  function rebased(family: FixtureFamily, item: Json): Rebased {
    heightOffset += 10;
    return rebaseBlock(family, item, heightBase + heightOffset, randomSuffix());
  }

  async function postBlock(family: FixtureFamily, block: Rebased | { item: Json; height: number }, reorged?: number[]): Promise<void> {
    const network = FIXTURE_NETWORKS[family];
    await post(network, streamerBody([block.item], { network, dataset: datasetOf(family), start: block.height, reorged }), {
      'batch-start-range': String(block.height),
      'stream-dataset': datasetOf(family),
    });
  }

  const rowsOfBlock = (network: string, blockHash: string) => db('tx.transactions').where({ network, block_hash: blockHash });
  async function waitRows(network: string, blockHash: string, count: number): Promise<Json[]> {
    return waitFor(
      async () => {
        const rows = await rowsOfBlock(network, blockHash).select('*').orderBy('tx_index');
        return rows.length >= count ? rows : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 100, what: `${count} rows of ${network} block ${blockHash}` },
    );
  }

  /**
   * Every chain.tx message so far, once `added` more than before have arrived and the parser has
   * nothing left in flight (so an unexpected extra message would be among them). One reader for
   * the whole block: a fresh consumer group per read would wait for a group join each time.
   */
  async function chainTxMessages(added: number): Promise<{ key: string; value: ChainTxMessage }[]> {
    expectedMessages += added;
    await waitFor(() => txMessages().length >= expectedMessages, { timeoutMs: 30_000, what: `${expectedMessages} chain.tx messages (have ${txMessages().length})` });
    // The parser commits a raw record only after its publishes: once it committed everything
    // posted, all it will publish is on chain.tx, and the reader has read all of that.
    await groupCaughtUp(`${prefix}chain-parser`, prefix + TOPICS.chainRaw.name);
    await txReader!.settled();
    expect(txMessages().length, 'no unexpected chain.tx messages').to.equal(expectedMessages);
    return txMessages().map((m) => ({ key: m.key!.toString(), value: JSON.parse(m.value!.toString()) as ChainTxMessage }));
  }

  it('stores real blocks of all four families, checks transfers against the fixtures, and publishes one chain.tx message per stored transaction', async () => {
    const evm = rebased('evm', evmBlockItem());
    const sol = rebased('svm', solanaBlockItem());
    const tron = rebased('tvm', tronBlockItem());
    const btc = rebased('utxo', bitcoinBlockItem(766390));
    for (const [family, block] of [['evm', evm], ['svm', sol], ['tvm', tron], ['utxo', btc]] as const) await postBlock(family, block);

    // EVM: every transaction of the block; receipt #0's first log is an ERC-20 Transfer.
    const evmRows = await waitRows('ethereum-mainnet', evm.blockHash, evm.item.block.transactions.length);
    expect(evmRows.map((r) => r.tx_hash)).to.deep.equal(evm.item.block.transactions.map((t: Json) => t.hash));
    expect(evmRows.every((r) => Number(r.height) === evm.height && r.chain_id === 1 && !r.orphaned && !r.is_reorg_resend)).to.equal(true);
    const receipt = evm.item.receipts[0];
    const log = receipt.logs[0];
    const evmTransfer = evmRows.find((r) => r.tx_hash === receipt.transactionHash).record.token_transfers[0];
    expect(evmTransfer).to.include({
      from_address: '0x' + log.topics[1].slice(26),
      to_address: '0x' + log.topics[2].slice(26),
      token_contract_address: log.address.toLowerCase(),
      amount: BigInt(log.data).toString(),
    });
    const failedHashes = evm.item.receipts.filter((r: Json) => r.status === '0x0').map((r: Json) => r.transactionHash);
    expect(evmRows.filter((r) => r.tx_status === 'failed').map((r) => r.tx_hash)).to.have.members(failedHashes);

    // Solana: vote-only transactions produce no record; tx #1 moves 12500 units between token accounts (inner spl-token transfer).
    const VOTE = 'Vote111111111111111111111111111111111111111';
    const nonVote = sol.item.transactions.filter((t: Json) => !t.transaction.message.instructions.every((i: Json) => i.programId === VOTE));
    const solRows = await waitRows('solana-devnet', sol.blockHash, nonVote.length);
    expect(solRows.map((r) => r.tx_hash)).to.have.members(nonVote.map((t: Json) => t.transaction.signatures[0]));
    expect(solRows.every((r) => Number(r.height) === sol.height && r.chain_id === 103)).to.equal(true);
    const solTx = sol.item.transactions[1];
    const inner = solTx.meta.innerInstructions[0].instructions[0].parsed.info;
    const solRecord = solRows.find((r) => r.tx_hash === solTx.transaction.signatures[0]).record;
    expect(solRecord.token_transfers).to.have.length(1);
    expect(solRecord.token_transfers[0]).to.include({ from_token_address: inner.source, to_token_address: inner.destination, amount: inner.amount });

    // Tron: every transaction; the first TransferContract pays `amount` sun from owner to to_address.
    const tronRows = await waitRows('tron-mainnet', tron.blockHash, tron.item.transactions.length);
    const trx = tron.item.transactions.find((t: Json) => t.raw_data.contract[0].type === 'TransferContract');
    const trxValue = trx.raw_data.contract[0].parameter.value;
    expect(tronRows.find((r) => r.tx_hash === trx.txID).record).to.include({ sender: trxValue.owner_address, receiver: trxValue.to_address, amount: String(trxValue.amount), transfer_type: 'native' });

    // Bitcoin: every transaction; outputs in satoshi, by address.
    const btcRows = await waitRows('bitcoin-mainnet', btc.blockHash, btc.item.tx.length);
    expect(btcRows.map((r) => r.tx_hash)).to.deep.equal(btc.item.tx.map((t: Json) => t.txid));
    for (const t of btc.item.tx) {
      const rec = btcRows.find((r) => r.tx_hash === t.txid).record;
      expect(rec.to_details.map((d: Json) => [d.address, d.amount])).to.deep.equal(t.vout.map((o: Json) => [o.scriptPubKey.address ?? null, String(Math.round(o.value * 1e8))]));
    }

    // The address index serves the token filter of the EVM transfer's receiver.
    const evmTx = evmRows.find((r) => r.tx_hash === receipt.transactionHash);
    const idx = await db('tx.address_index').where({ tx_id: evmTx.id, address: evmTransfer.to_address }).first();
    expect(idx.tokens).to.include(evmTransfer.token_contract_address);

    // chain.tx.v1: one message per stored row (published after the rows were committed), id = row id.
    const rows = [...evmRows, ...solRows, ...tronRows, ...btcRows];
    const messages = await chainTxMessages(rows.length);
    const byHash = new Map(messages.map((m) => [m.value.tx.tx_hash, m]));
    for (const row of rows) {
      const m = byHash.get(row.tx_hash);
      expect(m, `message for ${row.tx_hash}`).to.not.equal(undefined);
      expect(m!.key).to.equal(`${row.chain_type}:${row.chain_id}:${row.tx_hash}`);
      expect(m!.value).to.deep.equal({ id: row.id, network: row.network, is_reorg_resend: false, orphaned: false, tx: row.record });
    }
  });

  it('the same block posted again adds no row and publishes nothing; a receipts post of a stored block publishes what it changed', async () => {
    const block = rebased('evm', evmBlockItem());
    // First the block alone (the `block` dataset), then the full element again and again.
    await post('ethereum-mainnet', streamerBody([block.item.block], { network: 'ethereum-mainnet', dataset: 'block', start: block.height }));
    const first = await waitRows('ethereum-mainnet', block.blockHash, 125);
    await chainTxMessages(125);
    expect(first.every((r) => r.record.gas_used === null)).to.equal(true);

    await postBlock('evm', block);
    // Receipts and traces add gas used and fees to every transaction of the block.
    const messages = await chainTxMessages(125);
    const merged = await waitFor(
      async () => {
        const rows = await rowsOfBlock('ethereum-mainnet', block.blockHash).select('*').orderBy('tx_index');
        return rows.every((r) => r.record.gas_used !== null) ? rows : undefined;
      },
      { timeoutMs: 10_000, what: 'merged rows' },
    );
    expect(merged.map((r) => [r.id, r.tx_hash])).to.deep.equal(first.map((r) => [r.id, r.tx_hash]));
    const latest = new Map(messages.slice(-125).map((m) => [m.value.tx.tx_hash, m.value]));
    const posted = new Map((block.item.block.transactions as { hash: string; from: string; to: string | null }[]).map((t) => [t.hash, t]));
    for (const row of merged) {
      const { earlier_parties: earlier, ...message } = latest.get(row.tx_hash)!;
      expect(message, row.tx_hash).to.deep.equal({ id: row.id, network: row.network, is_reorg_resend: false, orphaned: false, tx: row.record });
      // An enrichment that kept the status names the parties the block alone showed (sender and
      // receiver of the posted transaction), so applications already pushed are not pushed again;
      // a status change is pushed to everyone and names none.
      const before = first.find((r) => r.tx_hash === row.tx_hash)!;
      const raw = posted.get(row.tx_hash)!;
      if (before.record.tx_status === row.record.tx_status) {
        expect(earlier, row.tx_hash).to.include.members([raw.from, raw.to].filter((a): a is string => a !== null).map((a) => a.toLowerCase()));
      } else {
        expect(earlier, row.tx_hash).to.equal(undefined);
      }
    }

    // The same full post again adds nothing: stored, and no message (chainTxMessages checks none came).
    const storedRecords = async () => (await parserMetrics())('chainpipe_parser_records_total', { network: 'ethereum-mainnet', outcome: 'stored' });
    const storedBefore = await storedRecords();
    await postBlock('evm', block);
    await waitFor(async () => (await storedRecords()) > storedBefore, { timeoutMs: 10_000, what: 'the repeated post stored' });
    await chainTxMessages(0);
    const again = await rowsOfBlock('ethereum-mainnet', block.blockHash).select('*').orderBy('tx_index');
    expect(again.map((r) => [r.id, r.tx_hash, r.record])).to.deep.equal(merged.map((r) => [r.id, r.tx_hash, r.record]));
    expect(await db('tx.blocks').where({ network: 'ethereum-mainnet', height: block.height })).to.have.length(1);
  });

  it('dead-letters garbage and a block Postgres rejects, with the reason, and goes on with the next good post', async () => {
    await post('ethereum-mainnet', 'not json');
    // A real block whose first transaction claims an index beyond Postgres's integer: a data error.
    const bad = rebased('evm', evmBlockItem());
    bad.item.block.transactions[0].transactionIndex = '0x10000000000';
    await postBlock('evm', bad);
    const good = rebased('utxo', bitcoinBlockItem(766393));
    await postBlock('utxo', good);

    await waitRows('bitcoin-mainnet', good.blockHash, good.item.tx.length);
    await chainTxMessages(good.item.tx.length);
    const dead = await readTopic(rawDlq(), 2, 30_000);
    expect(dead).to.have.length(2);
    const [garbage, rejected] = dead;
    expect(garbage.value!.toString()).to.equal('not json');
    expect(garbage.headers!.network!.toString()).to.equal('ethereum-mainnet');
    expect(garbage.headers!['dlq-error-code']!.toString()).to.equal('UNPARSABLE');
    expect(garbage.headers!['dlq-error']!.toString()).to.match(/not JSON/);
    expect(rejected.headers!['dlq-error-code']!.toString()).to.equal('STORE_REJECTED');
    expect(rejected.headers!['dlq-error']!.toString()).to.match(/out of range/);
    expect(JSON.parse(rejected.value!.toString()).data[0].block.hash).to.equal(bad.blockHash);
    // The rejected block left nothing behind (one DB transaction).
    expect(await rowsOfBlock('ethereum-mainnet', bad.blockHash)).to.deep.equal([]);
    expect(await db('tx.blocks').where({ network: 'ethereum-mainnet', hash: bad.blockHash })).to.deep.equal([]);
  });

  it('a transaction too large for chain.tx.v1 stays stored and queryable, is counted, and the rest of its block is published', async () => {
    const block = rebased('evm', evmBlockItem());
    // 11,000 copies of one ERC-20 Transfer log: the transaction's record is ~4.8 MB, above chain.tx.v1's 4 MiB.
    const TRANSFER = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';
    const isTransfer = (l: Json) => l.topics[0] === TRANSFER && l.topics.length === 3;
    const receipt = block.item.receipts.find((r: Json) => r.logs.some(isTransfer));
    const log = receipt.logs.find(isTransfer);
    receipt.logs = Array.from({ length: 11_000 }, (_, i) => ({ ...log, logIndex: `0x${(1000 + i).toString(16)}` }));
    const skipped = async () => (await parserMetrics())('chainpipe_parser_chain_tx_skipped_total', { network: 'ethereum-mainnet' });
    const skippedBefore = await skipped();

    await postBlock('evm', block);
    const rows = await waitRows('ethereum-mainnet', block.blockHash, 125);
    const large = rows.find((r: Json) => r.tx_hash === receipt.transactionHash);
    expect(large.record.token_transfers).to.have.length(11_000);
    const messages = await chainTxMessages(124);
    expect(messages.slice(-124).map((m) => m.value.tx.tx_hash)).to.not.include(receipt.transactionHash);
    expect(new Set(messages.slice(-124).map((m) => m.value.tx.tx_hash))).to.deep.equal(new Set(rows.filter((r: Json) => r !== large).map((r: Json) => r.tx_hash)));
    expect((await skipped()) - skippedBefore).to.equal(1);
  });

  it('stores the readable rest of a block with one unreadable transaction and keeps the delivery in the DLQ for a replay', async () => {
    const block = rebased('utxo', bitcoinBlockItem(766393));
    // The third transaction loses its id: the parser cannot name it, so it cannot be stored.
    const broken = block.item.tx[2].txid;
    delete block.item.tx[2].txid;
    delete block.item.tx[2].hash;
    await postBlock('utxo', block);
    const rows = await waitRows('bitcoin-mainnet', block.blockHash, block.item.tx.length - 1);
    expect(rows).to.have.length(block.item.tx.length - 1);
    expect(rows.map((r: Json) => r.tx_hash)).to.not.include(broken);
    await chainTxMessages(block.item.tx.length - 1);
    const partial = await waitFor(
      async () => (await readTopic(rawDlq(), 1, 10_000)).find((m) => m.headers!['dlq-error-code']!.toString() === 'PARTIAL_PARSE'),
      { timeoutMs: 40_000, what: 'the delivery in the DLQ' },
    );
    expect(partial.headers!['dlq-error']!.toString()).to.match(/1 unreadable item\(s\), the rest stored: .*missing or invalid txid/);
    expect(JSON.parse(partial.value!.toString()).data[0].hash).to.equal(block.blockHash);
  });

  it('a reorg (same height, another hash) orphans the transactions the new block lost and re-sends the moved ones', async () => {
    const old = rebased('evm', evmBlockItem());
    await postBlock('evm', old);
    const oldRows = await waitRows('ethereum-mainnet', old.blockHash, 125);
    await chainTxMessages(125);

    // The competing block: same height, another hash, the first 120 transactions of the old one.
    const newHash = withSuffix(old.blockHash, randomSuffix());
    const item = replaceStrings(old.item, new Map([[old.blockHash, newHash]]));
    item.block.transactions = item.block.transactions.slice(0, 120);
    item.receipts = item.receipts.slice(0, 120);
    item.traces = item.traces.slice(0, 120);
    await postBlock('evm', { item, height: old.height }, [old.height]);

    const moved = await waitRows('ethereum-mainnet', newHash, 120);
    const lost = oldRows.slice(120).map((r) => r.tx_hash);
    expect(moved.map((r) => r.id)).to.deep.equal(oldRows.slice(0, 120).map((r) => r.id));
    expect(moved.every((r) => r.is_reorg_resend && !r.orphaned)).to.equal(true);
    const lostRows = await db('tx.transactions').where({ chain_type: 'ethereum', chain_id: 1 }).whereIn('tx_hash', lost);
    expect(lostRows.map((r) => [r.tx_hash, r.orphaned, r.block_hash])).to.have.deep.members(lost.map((h) => [h, true, old.blockHash]));
    const blocks = await db('tx.blocks').where({ network: 'ethereum-mainnet', height: old.height });
    expect(blocks.map((b) => [b.hash, b.orphaned])).to.have.deep.members([
      [old.blockHash, true],
      [newHash, false],
    ]);

    // Messages are keyed per transaction over 3 partitions: compare as sets, not in order.
    const messages = await chainTxMessages(125);
    const resent = messages.filter((m) => m.value.tx.block_hash === newHash);
    expect(resent.map((m) => [m.value.id, m.value.tx.tx_hash, m.value.is_reorg_resend, m.value.orphaned])).to.have.deep.members(
      moved.map((r) => [r.id, r.tx_hash, true, false]),
    );
    const orphanedMessages = messages.filter((m) => m.value.orphaned);
    expect(orphanedMessages.map((m) => [m.value.tx.tx_hash, m.value.tx.block_hash])).to.have.deep.members(lost.map((h) => [h, old.blockHash]));

    // The metrics tell the same story.
    const value = await parserMetrics();
    expect(value('chainpipe_parser_blocks_stored_total', { network: 'ethereum-mainnet', kind: 'reorg' })).to.equal(1);
    expect(value('chainpipe_parser_txs_orphaned_total', { network: 'ethereum-mainnet' })).to.equal(5);
    expect(value('chainpipe_parser_records_total', { outcome: 'dead_letter' })).to.equal(2);
    expect(value('chainpipe_parser_store_duration_seconds_count', { network: 'ethereum-mainnet' })).to.be.greaterThan(0);
    // Every stored delivery (whole or partial) timed from chain-ingest's receipt to chain.tx.
    const storedDeliveries = value('chainpipe_parser_records_total', { outcome: 'stored' }) + value('chainpipe_parser_records_total', { outcome: 'partial' });
    expect(value('chainpipe_parser_ingest_to_publish_seconds_count', {})).to.equal(storedDeliveries);
    expect(value('chainpipe_parser_ingest_to_publish_seconds_sum', {})).to.be.greaterThan(0);
  });

  it("the metrics the two processes expose are the ones the source scan finds (deploy.test.ts' metric table), with their types", async () => {
    const scanned = await scannedMetricTypes();
    for (const port of [ingestOps, parserOps]) {
      const { types } = parsePrometheusText(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text());
      expect(types.size).to.be.greaterThan(30);
      for (const [name, type] of types) expect(scanned.get(name), `${name} exposed on :${port}`).to.equal(type);
    }
  });
});
