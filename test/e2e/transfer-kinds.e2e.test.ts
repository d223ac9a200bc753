import { randomBytes, randomInt } from 'node:crypto';
import { keccak_256 } from '@noble/hashes/sha3';
import { bytesToHex } from '@noble/hashes/utils';
import { expect } from 'chai';
import { createDb, type Knex } from '@chainpipe/db';

import {
  createAppWithKey,
  bitcoinBlockItem,
  bitcoinRawBlock,
  createRegistryTopics,
  evmBlockItem,
  freePort,
  readFixtureJson,
  readJson,
  rebaseBlock,
  replaceStrings,
  type Rebased,
  type RunningProcess,
  spawnTs,
  stopProcess,
  streamerBody,
  testEnv,
  uniquePrefix,
  waitFor,
  waitReady,
  withSuffix,
} from '@chainpipe/testing';

type Json = any;

// Round trips /stream → chain-parser → Postgres → transfers/search for a receiver of each kind of
// value movement added by address monitoring III. Expectations are read from the raw fixtures
// (eth-mainnet 17053184, polygon-pos state-sync receipt, btc-mainnet 766393), never from our
// parsers; blocks are rebased to run-specific heights and hashes, addresses stay real.

const WETH = '0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2';
const ZERO = '0x0000000000000000000000000000000000000000';
const DEPOSIT_TOPIC = '0xe1fffcc4923d04b559f4d29a8bfc6cda04eb5b0d3c460751c2402c5c5cc9109c';
const WITHDRAWAL_TOPIC = '0x7fcf532c15f0a6db0bd6d0e038bea71d30d808c7d98cb3bf7268a95bf5081b65';
const TRANSFER_SINGLE_TOPIC = '0xc3d58168c5ae7397731d063d5bbf3d657854427343f4c083240f7aacaa2d0f62';
const LOG_TRANSFER_TOPIC = '0xe6497e3ee548a3372136af2fcb0696db31fc6cf20260707645068bd3fe97f3c4';
const topicAddress = (t: string) => '0x' + t.slice(-40).toLowerCase();

/** The documented synthetic hash of a beacon withdrawal record (docs/decisions.md#d60). */
function withdrawalHash(blockHash: string, index: string): string {
  const idx = Buffer.alloc(8);
  idx.writeBigUInt64BE(BigInt(index));
  return '0x' + bytesToHex(keccak_256(Buffer.concat([Buffer.from('chainpipe:eip4895-withdrawal:v1'), Buffer.from(blockHash.slice(2), 'hex'), idx])));
}

describe('address monitoring III end to end: every new transfer kind from /stream to search', function () {
  this.timeout(180_000);
  const secret = randomBytes(12).toString('hex');
  const procs: RunningProcess[] = [];
  let db: Knex;
  let gateway: string;
  let ingest: string;
  let apiKey: string;
  let evm: Rebased;
  const height = 3_000_000_000 + randomInt(1_000_000_000);
  const suffix = () => Array.from({ length: 6 }, () => '123456789abcdef'[randomInt(15)]).join('');

  async function post(network: string, items: Json[], dataset: string, start: number, reorged?: number[]): Promise<void> {
    const res = await fetch(`${ingest}/stream`, {
      method: 'POST',
      headers: { 'content-secret-x': secret, 'cl-stream-network': network, 'content-type': 'application/octet-stream' },
      body: streamerBody(items, { network, dataset, start, reorged }),
    });
    expect(res.status, network).to.equal(200);
  }

  async function search(body: Record<string, unknown>): Promise<Json[]> {
    const res = await fetch(`${gateway}/tx/api/v1/transfers/search`, {
      method: 'POST',
      headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ limit: 50, ...body }),
    });
    expect(res.status).to.equal(200);
    const json = await readJson(res);
    expect(json.code).to.equal(1);
    return json.data;
  }

  /** Waits until the search for `address` lists `hash` (newest first, so a fresh record is on page 1). */
  async function found(address: string, chainType: string, hash: string, extra: Record<string, unknown> = {}): Promise<Json> {
    return waitFor(async () => (await search({ address, chain_type: chainType, ...extra })).find((r) => r.tx_hash === hash), { timeoutMs: 40_000, intervalMs: 200, what: `${hash} in the history of ${address}` });
  }

  before(async () => {
    const env = testEnv();
    db = createDb({ url: env.databaseUrl, poolMax: 2 });
    apiKey = (await createAppWithKey(db, { name: 'kinds' })).key;

    const prefix = uniquePrefix('kinds');
    await createRegistryTopics(prefix);
    const common = { KAFKA_BROKERS: env.kafkaBrokers.join(','), KAFKA_TOPIC_PREFIX: prefix, DATABASE_URL: env.databaseUrl, LOG_LEVEL: 'warn' };
    const [ingestPort, ingestOps, parserOps, gwPort, gwOps] = await Promise.all([freePort(), freePort(), freePort(), freePort(), freePort()]);
    const ing = spawnTs('apps/chain-ingest/src/main.ts', { ...common, STREAM_SECRET: secret, PORT: String(ingestPort), OPS_PORT: String(ingestOps) });
    const parser = spawnTs('apps/chain-parser/src/main.ts', { ...common, OPS_PORT: String(parserOps), CHAIN_PARSER_GROUP: `${prefix}parser` });
    const gw = spawnTs('apps/tx-gateway/src/main.ts', { ...common, PORT: String(gwPort), OPS_PORT: String(gwOps), WEBHOOK_SECRET_KEY: '42'.repeat(32), CHAIN_RPC_DEFAULT_BASE: 'http://127.0.0.1:9/rpc' });
    procs.push(ing, parser, gw);
    await Promise.all([waitReady(ing, ingestOps, 60_000), waitReady(parser, parserOps, 60_000), waitReady(gw, gwOps, 60_000)]);
    gateway = `http://127.0.0.1:${gwPort}`;
    ingest = `http://127.0.0.1:${ingestPort}`;

    evm = rebaseBlock('evm', evmBlockItem({ withdrawals: true }), height, suffix());
    await post('ethereum-mainnet', [evm.item], 'block_with_receipts', height);
  });

  after(async () => {
    for (const p of procs) expect(await stopProcess(p)).to.equal(0);
    await db.destroy();
  });

  it('ERC-1155: the receiver of the TransferSingle finds it with token id and units', async () => {
    const receipt = evm.item.receipts.find((r: Json) => r.logs.some((l: Json) => l.topics[0] === TRANSFER_SINGLE_TOPIC));
    const log = receipt.logs.find((l: Json) => l.topics[0] === TRANSFER_SINGLE_TOPIC);
    const to = topicAddress(log.topics[3]);
    const record = await found(to, 'ethereum', receipt.transactionHash, { token: log.address });
    const t = record.token_transfers.find((x: Json) => x.standard === 'erc1155');
    expect(t).to.include({ from_address: topicAddress(log.topics[2]), to_address: to, token_contract_address: log.address, token_id: BigInt(log.data.slice(0, 66)).toString(), amount: BigInt('0x' + log.data.slice(66, 130)).toString() });
  });

  it('WETH: the depositor finds its Deposit as a mint, the withdrawer its Withdrawal as a burn', async () => {
    const logs = evm.item.receipts.flatMap((r: Json) => r.logs.filter((l: Json) => l.address === WETH && [DEPOSIT_TOPIC, WITHDRAWAL_TOPIC].includes(l.topics[0])).map((l: Json) => ({ ...l, tx: r.transactionHash })));
    const deposit = logs.find((l: Json) => l.topics[0] === DEPOSIT_TOPIC);
    const withdrawal = logs.find((l: Json) => l.topics[0] === WITHDRAWAL_TOPIC);
    for (const [log, isDeposit] of [[deposit, true], [withdrawal, false]] as const) {
      const party = topicAddress(log.topics[1]);
      const record = await found(party, 'ethereum', log.tx, { token: WETH });
      const t = record.token_transfers.find((x: Json) => x.token_contract_address === WETH && (isDeposit ? x.from_address === ZERO : x.to_address === ZERO));
      expect(t, log.tx).to.include({ [isDeposit ? 'to_address' : 'from_address']: party, amount: BigInt(log.data).toString() });
    }
  });

  it('beacon withdrawals: each receiver finds its credit as a system record; a replay and a reorg leave one visible record', async () => {
    const block = evm.item.block;
    const w = block.withdrawals[0];
    const first = await found(w.address, 'ethereum', withdrawalHash(block.hash, w.index), { tx_type: 'system' });
    expect(first).to.include({ sender: null, receiver: w.address, amount: (BigInt(w.amount) * 10n ** 9n).toString(), transfer_type: 'system', tx_status: 'success' });
    const stored = await db('tx.transactions').whereIn('tx_hash', block.withdrawals.map((x: Json) => withdrawalHash(block.hash, x.index)));
    expect(stored).to.have.length(16);

    // Replay: the same block again changes nothing a client sees.
    await post('ethereum-mainnet', [evm.item], 'block_with_receipts', height);
    const marker = rebaseBlock('evm', evmBlockItem({ withdrawals: true }), height + 1, suffix());
    await post('ethereum-mainnet', [marker.item], 'block_with_receipts', height + 1);
    await found(w.address, 'ethereum', withdrawalHash(marker.item.block.hash, w.index)); // the replay before it is done too
    const mine = (await search({ address: w.address, chain_type: 'ethereum', tx_type: 'system' })).filter((r) => r.tx_hash === first.tx_hash);
    expect(mine.map((r) => r.id)).to.deep.equal([first.id]);

    // Reorg: a competing block of the same height and withdrawals under another hash.
    const newHash = withSuffix(block.hash, suffix());
    const competing = replaceStrings(evm.item, new Map([[block.hash, newHash]]));
    await post('ethereum-mainnet', [competing], 'block_with_receipts', height, [height]);
    const replacement = await found(w.address, 'ethereum', withdrawalHash(newHash, w.index));
    expect(replacement.amount).to.equal(first.amount);
    const visible = (await search({ address: w.address, chain_type: 'ethereum' })).map((r) => r.tx_hash);
    expect(visible).to.not.include(first.tx_hash);
    expect(visible.filter((h) => h === replacement.tx_hash)).to.have.length(1);
  });

  it('Polygon: the receiver of a LogTransfer in a receipts-only delivery finds it as an internal transfer', async () => {
    // polygon-pos 34155965 state-sync receipt, rebased: its tx and block hashes get a run suffix.
    const raw = readFixtureJson('evm/polygon-pos-34155965.bor_state-sync_receipt_0xd9273904.json');
    const receipt = replaceStrings(raw, new Map([
      [raw.transactionHash, withSuffix(raw.transactionHash, suffix())],
      [raw.blockHash, withSuffix(raw.blockHash, suffix())],
    ]));
    receipt.blockNumber = '0x' + height.toString(16);
    const log = receipt.logs.find((l: Json) => l.topics[0] === LOG_TRANSFER_TOPIC);
    await post('polygon-mainnet', [[receipt]], 'receipts', height);
    const to = topicAddress(log.topics[3]);
    const record = await found(to, 'polygon', receipt.transactionHash);
    expect(record.internal_transactions.find((i: Json) => i.to_address === to)).to.include({ from_address: topicAddress(log.topics[2]), amount: BigInt(log.data.slice(0, 66)).toString() });
  });

  it('Bitcoin raw block: every kind of output address finds its transaction', async () => {
    // btc-mainnet 766393 as getblock verbosity 0 (derived): hashes cannot be rebased inside raw
    // bytes, so it is stored under its real hash and height (storing again is idempotent).
    const block = bitcoinBlockItem(766393);
    await post('bitcoin-mainnet', [bitcoinRawBlock(block)], 'block', block.height);
    const samples = new Map<string, { txid: string; value: number }>();
    for (const t of block.tx) for (const o of t.vout) if (o.scriptPubKey.address && !samples.has(o.scriptPubKey.type)) samples.set(o.scriptPubKey.type, { txid: t.txid, value: o.value, ...o.scriptPubKey });
    expect(samples.size).to.be.greaterThan(1);
    for (const [type, s] of samples) {
      const address = (s as Json).address;
      const record = await found(address, 'bitcoin', s.txid);
      expect(record.to_details.some((d: Json) => d.address === address && d.amount === BigInt(s.value.toFixed(8).replace('.', '')).toString()), type).to.equal(true);
    }
  });
});
