import { randomBytes, randomInt } from 'node:crypto';
import { expect } from 'chai';
import { createDb, type Knex } from '@chainpipe/db';

import {
  createAppWithKey,
  bitcoinBlockItem,
  createRegistryTopics,
  evmBlockItem,
  type FixtureFamily,
  freePort,
  readJson,
  rebaseBlock,
  type Rebased,
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
} from '@chainpipe/testing';

type Json = any;

/** A transfer as read straight from the raw fixture JSON, with no help from our parsers. */
interface Expected {
  chainType: string;
  chainId: number;
  hash: string;
  from: string;
  to: string;
  amount: string;
  token?: string;
  /** Solana SPL: from/to are token accounts, not wallets. */
  splAccounts?: boolean;
  time: number;
}

const TRANSFER_TOPIC = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';
const topicAddress = (t: string) => '0x' + t.slice(-40).toLowerCase();

function evmExpected(r: Rebased): Expected[] {
  const { block, receipts } = r.item;
  const time = Number(BigInt(block.timestamp));
  const out: Expected[] = [];
  const status = new Map<string, string>(receipts.map((x: Json) => [x.transactionHash, x.status]));
  // Plain ETH payments: value > 0, no calldata, receipt status 1.
  for (const t of block.transactions) {
    if (BigInt(t.value) > 0n && t.input === '0x' && status.get(t.hash) === '0x1' && t.to) {
      out.push({ chainType: 'ethereum', chainId: 1, hash: t.hash, from: t.from.toLowerCase(), to: t.to.toLowerCase(), amount: BigInt(t.value).toString(), time });
    }
  }
  // ERC-20 transfers: Transfer logs with 3 topics in successful receipts.
  for (const rc of receipts) {
    if (rc.status !== '0x1') continue;
    for (const log of rc.logs) {
      if (log.topics[0] === TRANSFER_TOPIC && log.topics.length === 3 && log.data.length > 2) {
        out.push({ chainType: 'ethereum', chainId: 1, hash: rc.transactionHash, from: topicAddress(log.topics[1]), to: topicAddress(log.topics[2]), amount: BigInt(log.data).toString(), token: log.address.toLowerCase(), time });
      }
    }
  }
  return out;
}

function tronExpected(r: Rebased): Expected[] {
  const time = Math.floor(r.item.block_header.raw_data.timestamp / 1000);
  return r.item.transactions
    .filter((t: Json) => t.raw_data.contract[0].type === 'TransferContract' && t.ret?.[0]?.contractRet === 'SUCCESS')
    .map((t: Json) => {
      const v = t.raw_data.contract[0].parameter.value;
      return { chainType: 'tron', chainId: 1, hash: t.txID, from: v.owner_address, to: v.to_address, amount: String(v.amount), time };
    });
}

function solanaExpected(r: Rebased): Expected[] {
  // This devnet block moves value only through SPL-token `transfer` instructions run as inner
  // instructions: source and destination are token accounts, amount the raw token amount.
  const out: Expected[] = [];
  for (const t of r.item.transactions) {
    if (t.meta.err !== null) continue;
    for (const inner of t.meta.innerInstructions ?? []) {
      for (const ix of inner.instructions) {
        if (ix.program === 'spl-token' && ix.parsed?.type === 'transfer') {
          out.push({ chainType: 'solana', chainId: 103, hash: t.transaction.signatures[0], from: ix.parsed.info.source, to: ix.parsed.info.destination, amount: String(ix.parsed.info.amount), time: r.item.blockTime, splAccounts: true });
        }
      }
    }
  }
  return out;
}

function bitcoinExpected(r: Rebased): Expected[] {
  // Receivers of non-coinbase transactions: each output address with its value (BTC → sat via
  // the decimal string, the way a person would read it).
  const out: Expected[] = [];
  for (const t of r.item.tx) {
    if (t.vin[0]?.coinbase) continue;
    for (const o of t.vout) {
      const address = o.scriptPubKey.address;
      if (!address) continue;
      const [whole, frac = ''] = o.value.toFixed(8).split('.');
      out.push({ chainType: 'bitcoin', chainId: 1, hash: t.txid, from: '', to: address, amount: String(BigInt(whole) * 100_000_000n + BigInt(frac.padEnd(8, '0'))), time: r.item.time });
    }
  }
  return out;
}

describe('address monitoring end to end: /stream → chain-parser → Postgres → transfers/search and V2', function () {
  this.timeout(180_000);
  const secret = randomBytes(12).toString('hex');
  const procs: RunningProcess[] = [];
  let db: Knex;
  let gateway: string;
  let apiKey: string;
  const blocks = new Map<FixtureFamily, Rebased>();
  const expected: Expected[] = [];

  const gatewayCall = async (path: string, body?: unknown) => {
    const res = await fetch(gateway + path, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    expect(res.status, path).to.equal(200);
    return readJson(res);
  };

  before(async () => {
    const env = testEnv();
    db = createDb({ url: env.databaseUrl, poolMax: 2 });
    apiKey = (await createAppWithKey(db, { name: 'e2e' })).key;

    const prefix = uniquePrefix('e2e');
    await createRegistryTopics(prefix);
    const common = { KAFKA_BROKERS: env.kafkaBrokers.join(','), KAFKA_TOPIC_PREFIX: prefix, DATABASE_URL: env.databaseUrl, LOG_LEVEL: 'warn' };
    const [ingestPort, ingestOps, parserOps, gwPort, gwOps] = await Promise.all([freePort(), freePort(), freePort(), freePort(), freePort()]);
    const ingest = spawnTs('apps/chain-ingest/src/main.ts', { ...common, STREAM_SECRET: secret, PORT: String(ingestPort), OPS_PORT: String(ingestOps) });
    const parser = spawnTs('apps/chain-parser/src/main.ts', { ...common, OPS_PORT: String(parserOps), CHAIN_PARSER_GROUP: `${prefix}parser` });
    const gw = spawnTs('apps/tx-gateway/src/main.ts', { ...common, PORT: String(gwPort), OPS_PORT: String(gwOps), WEBHOOK_SECRET_KEY: '42'.repeat(32), CHAIN_RPC_DEFAULT_BASE: 'http://127.0.0.1:9/rpc' });
    procs.push(ingest, parser, gw);
    await Promise.all([waitReady(ingest, ingestOps, 60_000), waitReady(parser, parserOps, 60_000), waitReady(gw, gwOps, 60_000)]);
    gateway = `http://127.0.0.1:${gwPort}`;

    // Real fixture blocks under run-specific heights and hashes (addresses stay real).
    const suffix = Array.from({ length: 6 }, () => '123456789abcdef'[randomInt(15)]).join('');
    const height = 3_000_000_000 + randomInt(1_000_000_000);
    const items: [FixtureFamily, Json, string, string][] = [
      ['evm', evmBlockItem(), 'ethereum-mainnet', 'block_with_receipts'],
      ['tvm', tronBlockItem(), 'tron-mainnet', 'block'],
      ['svm', solanaBlockItem(), 'solana-devnet', 'block'],
      ['utxo', bitcoinBlockItem(766390), 'bitcoin-mainnet', 'block'],
    ];
    for (const [family, item, network, dataset] of items) {
      const rebased = rebaseBlock(family, item, height, suffix);
      blocks.set(family, rebased);
      const res = await fetch(`http://127.0.0.1:${ingestPort}/stream`, {
        method: 'POST',
        headers: { 'content-secret-x': secret, 'cl-stream-network': network, 'content-type': 'application/octet-stream' },
        body: streamerBody([rebased.item], { network, dataset, start: height }),
      });
      expect(res.status, network).to.equal(200);
    }
    expected.push(
      ...evmExpected(blocks.get('evm')!),
      ...tronExpected(blocks.get('tvm')!),
      ...solanaExpected(blocks.get('svm')!),
      ...bitcoinExpected(blocks.get('utxo')!),
    );
    const allHashes = [...blocks.values()].flatMap((b) => [...b.hashes.values()]);
    // Stored = visible to queries: wait until chain-parser committed every block.
    await waitFor(async () => {
      const { n } = (await db('tx.transactions').whereIn('block_hash', [...blocks.values()].map((b) => b.blockHash)).count<{ n: string }[]>({ n: '*' }))[0];
      return Number(n) >= 125 + 170 + 23 + 16;
    }, { timeoutMs: 60_000, what: `all blocks stored (${allHashes.length} hashes)` });
  });

  after(async () => {
    for (const p of procs) expect(await stopProcess(p)).to.equal(0);
    await db.destroy();
  });

  /** Pages through the search for `address` until `hash` shows up; checks the paging contract on the way. */
  async function findInHistory(address: string, chainType: string, hash: string, extra: Record<string, unknown> = {}): Promise<Json> {
    let cursor: number | undefined;
    let lastId = Infinity;
    const seen = new Set<number>();
    for (let page = 0; page < 50; page++) {
      const body = await gatewayCall('/tx/api/v1/transfers/search', { address, chain_type: chainType, limit: 50, ...extra, ...(cursor ? { id: cursor } : {}) });
      expect(body.code).to.equal(1);
      for (const r of body.data) {
        expect(r.id, 'ids strictly decrease across pages').to.be.lessThan(lastId);
        expect(seen.has(r.id), 'no record twice').to.equal(false);
        seen.add(r.id);
        lastId = r.id;
        if (r.tx_hash === hash) return r;
      }
      if (body.data.length < 50) return undefined;
      cursor = body.data[body.data.length - 1].id;
    }
    return undefined;
  }

  it('derives a meaningful set of transfers from the raw fixtures', () => {
    const by = (c: string) => expected.filter((e) => e.chainType === c);
    expect(by('ethereum').filter((e) => !e.token).length).to.be.greaterThan(5);
    expect(by('ethereum').filter((e) => e.token).length).to.be.greaterThan(20);
    expect(by('tron')).to.have.length(39); // 39 TransferContract in block 60836289 (SOURCES.md)
    expect(by('solana').length).to.be.greaterThan(0);
    expect(by('bitcoin').length).to.be.greaterThan(10);
  });

  it('finds each sampled transfer by its sender and by its receiver, with the amounts of the chain', async () => {
    const sample = [
      ...expected.filter((e) => e.chainType === 'ethereum' && !e.token).slice(0, 4),
      ...expected.filter((e) => e.chainType === 'ethereum' && e.token).slice(0, 4),
      ...expected.filter((e) => e.chainType === 'tron').slice(0, 3),
      ...expected.filter((e) => e.chainType === 'solana').slice(0, 2),
      ...expected.filter((e) => e.chainType === 'bitcoin').slice(0, 3),
    ];
    for (const e of sample) {
      const label = `${e.chainType} ${e.hash}`;
      const byReceiver = await findInHistory(e.to, e.chainType, e.hash, e.token ? { token: e.token } : {});
      expect(byReceiver, `${label} by receiver`).to.not.equal(undefined);
      expect(byReceiver.chain_id).to.equal(e.chainId);
      expect(byReceiver.tx_time).to.equal(e.time);
      if (e.token) {
        const t = byReceiver.token_transfers.find((x: Json) => x.to_address === e.to && x.from_address === e.from && x.token_contract_address === e.token);
        expect(t, `${label} token transfer`).to.not.equal(undefined);
        expect(t.amount).to.equal(e.amount);
      } else if (e.chainType === 'bitcoin') {
        expect(byReceiver.to_details.some((d: Json) => d.address === e.to && d.amount === e.amount), `${label} output`).to.equal(true);
      } else if (e.splAccounts) {
        const t = byReceiver.token_transfers.find((x: Json) => x.from_token_address === e.from && x.to_token_address === e.to && x.amount === e.amount);
        expect(t, `${label} SPL transfer between token accounts`).to.not.equal(undefined);
      } else {
        expect([byReceiver.sender, byReceiver.receiver, byReceiver.amount]).to.deep.equal([e.from, e.to, e.amount]);
      }
      if (e.from) {
        const bySender = await findInHistory(e.from, e.chainType, e.hash);
        expect(bySender?.id, `${label} by sender is the same record`).to.equal(byReceiver.id);
      }
    }
  });

  it('pages a busy address with a small limit to the end: newest first, no gaps, no duplicates', async () => {
    // The receiver of the most ERC-20 transfers in the block.
    const counts = new Map<string, Set<string>>();
    for (const e of expected.filter((x) => x.token)) counts.set(e.to, (counts.get(e.to) ?? new Set()).add(e.hash));
    const [address, hashes] = [...counts].sort((a, b) => b[1].size - a[1].size)[0];
    expect(hashes.size).to.be.greaterThan(1);
    const ids: number[] = [];
    const found = new Set<string>();
    let cursor: number | undefined;
    for (;;) {
      const body = await gatewayCall('/tx/api/v1/transfers/search', { address, chain_type: 'ethereum', chain_id: 1, limit: 2, ...(cursor ? { id: cursor } : {}) });
      for (const r of body.data) {
        ids.push(r.id);
        found.add(r.tx_hash);
      }
      if (body.data.length < 2) break;
      cursor = body.data[1].id;
    }
    expect([...hashes].every((h) => found.has(h)), 'every transfer of the address is on some page').to.equal(true);
    expect(ids).to.deep.equal([...ids].sort((a, b) => b - a));
    expect(new Set(ids).size).to.equal(ids.length);
  });

  it('fetches transactions in the V2 format, with and without 0x, and batch-gets them in the list format', async () => {
    const evm = expected.find((e) => e.chainType === 'ethereum' && !e.token)!;
    const v2 = await gatewayCall(`/tx/api/v1/transactions/${evm.hash}?chain_type=ethereum&chain_id=1`);
    expect(v2.code).to.equal(0);
    expect(v2.data).to.include({ txhash: evm.hash, txTime: evm.time * 1000, sender: evm.from, receiver: evm.to, amount: evm.amount, chain_type: 'ethereum', chain_id: 1, txStatus: 'success' });
    const bare = await gatewayCall(`/tx/api/v1/transactions/${evm.hash.slice(2)}?chain_type=ethereum&chain_id=1`);
    expect(bare.data.txhash).to.equal(evm.hash);
    const tron = expected.find((e) => e.chainType === 'tron')!;
    const tv2 = await gatewayCall(`/tx/api/v1/transactions/${tron.hash}?chain_type=tron&chain_id=1`);
    expect(tv2.data).to.include({ txhash: tron.hash, sender: tron.from, receiver: tron.to, amount: tron.amount });
    const batch = await gatewayCall('/tx/api/v1/transactions/batch-get', { chain_type: 'bitcoin', chain_id: 1, tx_hash: [...new Set(expected.filter((e) => e.chainType === 'bitcoin').map((e) => e.hash))].slice(0, 3) });
    expect(batch.code).to.equal(1);
    expect(batch.data).to.have.length(3);
  });
});
