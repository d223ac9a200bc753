import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { networkByName, type NetworkInfo } from '@chainpipe/chains';
import { createDb, type Knex } from '@chainpipe/db';
import { TOPICS } from '@chainpipe/contracts';
import { generateApiKey } from '@chainpipe/http';
import { parseEvmPayload } from '@chainpipe/tx-parsers';
import { storeBlock } from '@chainpipe/tx-store';
import { createAppWithKey,createRegistryTopics, documentAssertion, freePort, parsePrometheusText, readFixtureJson, readJson, spawnTs, stopProcess, testEnv, waitFor, waitReady, type RunningProcess } from '@chainpipe/testing';

type Json = any;

/**
 * The history queries of tx-gateway end to end: the real app process, the real test database
 * filled by the real write path (tx-store's storeBlock) with real fixture blocks, and a stand-in
 * chain node (node:http speaking JSON-RPC) answering from the same fixtures.
 *
 * Isolation from parallel runs: every address and hash of the fixtures is rewritten with a
 * per-run suffix (same rewrite for the node and the store), so no other test's rows can show up
 * in a search. Expected values are read from the (rewritten) raw fixture JSON, never from our
 * own output.
 */

const RUN = randomBytes(4).toString('hex');
const TRANSFER_TOPIC = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';
const ZERO_ADDRESS = '0'.repeat(40);

// ---------------------------------------------------------------------------------------------
// Fixtures, rewritten per run

/** Every address (40 hex) and every transaction / block hash (64 hex) of a fixture, with `tag` (RUN) in their last 8 digits. */
function rewrite<T>(raw: T, hashes: string[], tag = RUN): T {
  const text = JSON.stringify(raw);
  const addresses = new Set<string>();
  for (const m of text.matchAll(/0x([0-9a-fA-F]{40})(?![0-9a-fA-F])/g)) addresses.add(m[1].toLowerCase());
  for (const m of text.matchAll(/0x0{24}([0-9a-fA-F]{40})(?![0-9a-fA-F])/g)) addresses.add(m[1].toLowerCase());
  addresses.delete(ZERO_ADDRESS); // 40 zeros are also inside every zero-padded word
  const map = new Map<string, string>();
  for (const a of addresses) map.set(a, a.slice(0, 32) + tag);
  for (const h of hashes) map.set(h.slice(2).toLowerCase(), h.slice(2, 58).toLowerCase() + tag);
  const re = new RegExp([...map.keys()].sort((a, b) => b.length - a.length).join('|'), 'gi');
  return JSON.parse(text.replace(re, (m) => map.get(m.toLowerCase())!)) as T;
}

interface Fixture {
  block: Json;
  receipts: Json[];
}

function loadFixture(blockFile: string, receiptFiles: string[] | string, tag = RUN): Fixture {
  const unwrap = (v: Json) => (v && typeof v === 'object' && 'jsonrpc' in v ? v.result : v);
  const block = unwrap(readFixtureJson(blockFile));
  const receipts: Json[] = typeof receiptFiles === 'string' ? unwrap(readFixtureJson(receiptFiles)) : receiptFiles.map((f) => unwrap(readFixtureJson(f)));
  const hashes = [block.hash, block.parentHash, ...block.transactions.map((t: Json) => t.hash)];
  return rewrite({ block, receipts }, hashes, tag);
}

const A = loadFixture('evm/eth-mainnet-13998626.block_fulltx.json', 'evm/eth-mainnet-13998626.receipts.json');
const B = loadFixture('evm/eth-mainnet-17053184.block_fulltx.json', 'evm/eth-mainnet-17053184.receipts.json');
const BSC = loadFixture('evm/bsc-testnet-11832497.eth_getBlockByHash_full.json', [
  'evm/bsc-testnet-11832497.eth_getTransactionReceipt_bep20-transfer_0x4c4c66c0.json',
  'evm/bsc-testnet-11832497.eth_getTransactionReceipt_validator-deposit_0xac14bda8.json',
]);
/**
 * B once more under addresses and hashes of its own (another tag), for the reorg and replay tests:
 * stored at a height of its own, so reorganising it touches none of the other fixtures' rows.
 */
const REORG_TAG = randomBytes(4).toString('hex');
const R = loadFixture('evm/eth-mainnet-17053184.block_fulltx.json', 'evm/eth-mainnet-17053184.receipts.json', REORG_TAG);
const R_HEIGHT = 900_000_000 + (parseInt(REORG_TAG.slice(0, 6), 16) % 90_000_000);
/** Served by the stand-in node only: what the single-transaction endpoint has to fetch. */
const C = loadFixture('evm/eth-mainnet-1755635.eth_getBlockByNumber_full.json', [
  'evm/eth-mainnet-1755635.eth_getTransactionReceipt_0x2e3dcd05.json',
  'evm/eth-mainnet-1755635.eth_getTransactionReceipt_0x9a5437ec.json',
]);

const NET = (name: string): NetworkInfo => networkByName(name)!;

// ---------------------------------------------------------------------------------------------
// What the raw data says (the expectations)

const receiptOf = (f: Fixture, hash: string): Json | undefined => f.receipts.find((r) => r.transactionHash === hash);

/** ERC-20 / ERC-721 Transfer logs of a receipt as (token, from, to), read per the standard. */
function transfersOf(receipt: Json | undefined): { token: string; from: string; to: string }[] {
  if (!receipt || receipt.status === '0x0') return [];
  const out: { token: string; from: string; to: string }[] = [];
  for (const log of receipt.logs ?? []) {
    const t = log.topics ?? [];
    if (t[0] !== TRANSFER_TOPIC || (t.length !== 3 && t.length !== 4)) continue;
    if (t.length === 3 && (log.data ?? '0x').length < 66) continue;
    if (!/^0x0{24}/.test(t[1]) || !/^0x0{24}/.test(t[2])) continue;
    out.push({ token: log.address.toLowerCase(), from: '0x' + t[1].slice(26), to: '0x' + t[2].slice(26) });
  }
  return out;
}

/** Addresses a transaction involves (sender, receiver, created contract, token transfer parties) → tokens each moved. */
function partiesOf(f: Fixture, tx: Json): Map<string, Set<string>> {
  const parties = new Map<string, Set<string>>();
  const add = (a: string | null | undefined, token?: string) => {
    if (!a) return;
    const k = a.toLowerCase();
    if (!parties.has(k)) parties.set(k, new Set());
    if (token) parties.get(k)!.add(token);
  };
  const receipt = receiptOf(f, tx.hash);
  add(tx.from);
  add(tx.to);
  add(receipt?.contractAddress);
  for (const t of transfersOf(receipt)) {
    add(t.from, t.token);
    add(t.to, t.token);
  }
  return parties;
}

const txsOf = (f: Fixture, address: string): Json[] => f.block.transactions.filter((tx: Json) => partiesOf(f, tx).has(address));
const hashesOf = (f: Fixture, address: string): string[] => txsOf(f, address).map((t) => t.hash);

/** transfer_type of a raw transaction: a creation, else a token transfer when a token moved, else native when value moved, else a call. */
function typeOf(f: Fixture, tx: Json): string {
  if (!tx.to) return 'contract_creation';
  if (transfersOf(receiptOf(f, tx.hash)).length > 0) return 'token';
  return BigInt(tx.value) > 0n ? 'native' : 'contract_call';
}

/** Whether an address appears only in this one of the stored blocks (so its history is exactly this block's part). */
function onlyIn(f: Fixture, address: string): boolean {
  return [A, B, BSC].every((other) => other === f || hashesOf(other, address).length === 0);
}

/** The address involved in the most transactions of a block, among those no other stored block involves. */
function busiest(f: Fixture): string {
  const count = new Map<string, number>();
  for (const tx of f.block.transactions) for (const a of partiesOf(f, tx).keys()) count.set(a, (count.get(a) ?? 0) + 1);
  // The zero address is not rewritten (see `rewrite`), so other runs' rows could share it.
  return [...count].filter(([a]) => a !== '0x' + ZERO_ADDRESS && onlyIn(f, a)).sort((x, y) => y[1] - x[1])[0][0];
}

// ---------------------------------------------------------------------------------------------
// Stand-in chain node

type NodeMode = 'ok' | 'hang';

/** A JSON-RPC node for ethereum-mainnet answering from fixtures A, B and C, as a real node would. */
class StandInNode {
  server: http.Server | null = null;
  mode: NodeMode = 'ok';
  calls: { method: string; params: unknown[] }[] = [];
  port = 0;
  private readonly fixtures = [A, B, C];

  private answer(method: string, params: Json[]): unknown {
    const tx = (h: string) => {
      for (const f of this.fixtures) {
        const t = f.block.transactions.find((x: Json) => x.hash === h);
        if (t) return { f, t };
      }
      return undefined;
    };
    switch (method) {
      case 'eth_getTransactionByHash':
        return tx(params[0])?.t ?? null;
      case 'eth_getTransactionReceipt': {
        const found = tx(params[0]);
        return found ? (receiptOf(found.f, params[0]) ?? null) : null;
      }
      case 'eth_getBlockByNumber': {
        const f = this.fixtures.find((x) => x.block.number === params[0]);
        if (!f) return null;
        return { ...f.block, transactions: params[1] ? f.block.transactions : f.block.transactions.map((t: Json) => t.hash) };
      }
      default:
        throw Object.assign(new Error(`the method ${method} does not exist/is not available`), { code: -32601 });
    }
  }

  async start(port = 0): Promise<void> {
    this.server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        if (this.mode === 'hang') return; // never answers: the caller's timeout must fire
        if (req.url !== '/rpc/ethereum-mainnet') {
          res.writeHead(404).end();
          return;
        }
        const msg = JSON.parse(body);
        this.calls.push({ method: msg.method, params: msg.params });
        res.setHeader('content-type', 'application/json');
        try {
          res.end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result: this.answer(msg.method, msg.params) }));
        } catch (err) {
          res.end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, error: { code: (err as { code?: number }).code ?? -32000, message: (err as Error).message } }));
        }
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(port, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    const s = this.server;
    this.server = null;
    if (!s) return;
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }
}

// ---------------------------------------------------------------------------------------------

describe('tx-gateway history queries (real app, real Postgres, stand-in chain node)', function () {
  let db: Knex;
  let gateway: RunningProcess;
  /** Stores what the gateway fetched from the origin (chain.fetched.v1). */
  let parser: RunningProcess;
  let base: string;
  let opsBase: string;
  let apiKey: string;
  const node = new StandInNode();

  async function call(method: 'GET' | 'POST', path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; json: Json }> {
    const res = await fetch(base + path, {
      method,
      headers: { 'x-api-key': apiKey, 'content-type': 'application/json', ...headers },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const json = await readJson(res);
    await matchesDocument(method, path, res.status, res.headers.get('content-type'), json);
    return { status: res.status, json };
  }
  // Every answer is also checked against the gateway's own /openapi.json.
  const matchesDocument = documentAssertion(() => base);

  const search = async (body: Json, path = '/tx/api/v1/transfers/search') => {
    const r = await call('POST', path, body);
    expect(r.status, JSON.stringify(r.json)).to.equal(200);
    expect(r.json.code).to.equal(1);
    expect(r.json.msg).to.equal('success');
    return r.json.data as Json[];
  };

  /** Every page of a history query, following the cursor until a page is short. */
  async function allPages(body: Json, path?: string): Promise<{ records: Json[]; pages: number }> {
    const records: Json[] = [];
    let id: number | undefined;
    for (let pages = 1; pages < 1000; pages++) {
      const page = await search({ ...body, ...(id === undefined ? {} : { id }) }, path);
      expect(page.length).to.be.at.most(body.limit);
      records.push(...page);
      if (page.length < body.limit) return { records, pages };
      id = page[page.length - 1].id;
    }
    throw new Error('paging did not end');
  }

  const strictlyDescending = (ids: number[]) => ids.every((id, i) => i === 0 || id < ids[i - 1]);

  /** Parses a fixture block as chain-parser does and stores it with tx-store (at `height` if given). */
  async function storeFixture(f: Fixture, network: NetworkInfo, height?: number): Promise<void> {
    const ctx = { chainType: network.chainType, chainId: network.chainId, family: network.family, nativeSymbol: network.nativeSymbol, nativeDecimals: network.nativeDecimals };
    const parsed = parseEvmPayload([{ block: f.block, receipts: f.receipts }], ctx);
    expect(parsed.blocks).to.have.length(1);
    const { block, transactions } = parsed.blocks[0];
    await storeBlock(db, { network, block: height === undefined ? block : { ...block, height }, transactions });
  }

  before(async function () {
    this.timeout(90_000);
    const env = testEnv();
    db = createDb({ url: env.databaseUrl, poolMax: 4 });

    // Stored in this order, so B's transactions are newer (higher ids) than A's.
    const store = storeFixture;
    await store(A, NET('ethereum-mainnet'));
    await store(A, NET('polygon-mainnet')); // the same account history on a second EVM chain
    await store(B, NET('ethereum-mainnet'));
    await store(BSC, NET('bsc-testnet'));

    apiKey = (await createAppWithKey(db, { id: `txq-${RUN}`, name: 'tx queries test', label: 'test' })).key;

    await node.start();
    await createRegistryTopics(`${env.runId}-txq.`, [TOPICS.addressesChanges, TOPICS.txPush, TOPICS.chainFetched, TOPICS.chainTx, TOPICS.chainRaw]);
    const port = await freePort();
    const opsPort = await freePort();
    const parserOps = await freePort();
    parser = spawnTs('apps/chain-parser/src/main.ts', {
      DATABASE_URL: env.databaseUrl,
      KAFKA_BROKERS: env.kafkaBrokers.join(','),
      KAFKA_TOPIC_PREFIX: `${env.runId}-txq.`,
      CHAIN_PARSER_GROUP: `${env.runId}-txq-parser`,
      CHAIN_PARSER_FETCHED_GROUP: `${env.runId}-txq-fetched`,
      OPS_PORT: String(parserOps),
      LOG_LEVEL: 'warn',
    });
    gateway = spawnTs('apps/tx-gateway/src/main.ts', {
      DATABASE_URL: env.databaseUrl,
      KAFKA_BROKERS: env.kafkaBrokers.join(','),
      KAFKA_TOPIC_PREFIX: `${env.runId}-txq.`,
      REDIS_URL: env.redisUrl,
      WEBHOOK_SECRET_KEY: randomBytes(32).toString('hex'),
      PORT: String(port),
      OPS_PORT: String(opsPort),
      CHAIN_RPC_DEFAULT_BASE: `http://127.0.0.1:${node.port}/rpc`,
      CHAIN_RPC_TIMEOUT_MS: '1500',
      BODY_LIMIT_BYTES: String(64 * 1024),
      LOG_LEVEL: 'warn',
    });
    await Promise.all([waitReady(gateway, opsPort, 90_000), waitReady(parser, parserOps, 90_000)]);
    base = `http://127.0.0.1:${port}`;
    opsBase = `http://127.0.0.1:${opsPort}`;
  });

  after(async () => {
    if (gateway) expect(await stopProcess(gateway)).to.equal(0);
    if (parser) expect(await stopProcess(parser)).to.equal(0);
    await node.stop();
    await db?.destroy();
  });

  describe('authentication and bad input', () => {
    it('401 without a key, 403 with a key that is not ours', async () => {
      const none = await fetch(base + '/tx/api/v1/transfers/search', { method: 'POST', body: '{"address":"0x1"}' });
      expect(none.status).to.equal(401);
      expect(await readJson(none)).to.deep.equal({ code: 401, msg: 'missing X-API-Key', data: null });
      const wrong = await call('POST', '/tx/api/v1/transfers/search', { address: '0x1' }, { 'x-api-key': generateApiKey().token });
      expect(wrong.status).to.equal(403);
      expect(wrong.json).to.deep.equal({ code: 403, msg: 'invalid API key', data: null });
      const v2 = await fetch(`${base}/tx/api/v1/transactions/${B.block.transactions[0].hash}?chain_type=ethereum&chain_id=1`);
      expect(v2.status).to.equal(401);
    });

    it('serves its OpenAPI document and /docs without a key; everything else still needs one', async () => {
      const doc = await fetch(`${base}/openapi.json`);
      expect(doc.status).to.equal(200);
      const paths = Object.keys(((await doc.json()) as { paths: object }).paths);
      expect(paths).to.include.members(['/tx/api/v1/transfers/search', '/tx/api/v1/transactions/{tx_hash}', '/api/v1/rpcproxy', '/tx/api/v1/app/config']);
      expect((await fetch(`${base}/docs`)).status).to.equal(200);
      expect((await fetch(`${base}/docs/redoc.standalone.js`)).status).to.equal(200);
    });

    it('400 with the envelope for every malformed body, 413 past the body limit', async () => {
      const group = (n: number) => ({ chain_type: 'ethereum', chain_id: 1, address: Array.from({ length: n }, (_, i) => `0x${i}`) });
      const cases: [string, unknown, RegExp][] = [
        ['/tx/api/v1/transfers/search', { chain_type: 'ethereum' }, /address is required/],
        ['/tx/api/v1/transfers/search', { address: '0x1', limit: 0 }, /limit/],
        ['/tx/api/v1/transfers/search', { address: '0x1', limit: 101 }, /limit/],
        ['/tx/api/v1/transfers/search', { address: '0x1', limit: '101' }, /limit must be an integer from 1 to 100/],
        ['/tx/api/v1/transfers/search', { address: '0x1', chain_type: 'dogecoin' }, /chain_type "dogecoin" is not supported/],
        ['/tx/api/v1/transfers/search', { address: '0x1', id: 'abc' }, /id/],
        ['/tx/api/v1/transfers/search', { address: "0x1' or '1'='1" }, /address/],
        ['/tx/api/v1/transfers/search', { address: '0x1', tx_type: 'swap' }, /tx_type/],
        ['/tx/api/v1/transfers/search', [], /must be object/],
        ['/tx/api/v1/transfers/search', 'null', /must be object/],
        ['/tx/api/v1/transfers/multi-chain', { addresses: Array.from({ length: 11 }, () => group(1)) }, /addresses must NOT have more than 10 items/],
        ['/tx/api/v1/transfers/multi-chain', { addresses: [group(21)] }, /addresses\.0\.address must NOT have more than 20 items/],
        ['/tx/api/v1/transfers/multi-chain', { addresses: [] }, /addresses must NOT have fewer than 1 items/],
        ['/tx/api/v1/transfers/multi-chain', { addresses: [{ chain_type: 'ethereum', chain_id: 5, address: ['0x1'] }] }, /chain_id 5 is not a supported ethereum network/],
        ['/tx/api/v1/transactions/batch-get', { chain_type: 'ethereum', chain_id: 1 }, /tx_hash is required/],
        ['/tx/api/v1/transactions/batch-get', { chain_type: 'ethereum', chain_id: 1, tx_hash: Array(101).fill('0x1') }, /tx_hash/],
        ['/tx/api/v1/transfers/search', '{"address": "0x1",', /invalid JSON/],
      ];
      for (const [path, body, msg] of cases) {
        const r = await call('POST', path, typeof body === 'string' ? body : JSON.stringify(body));
        expect(r.status, `${path} ${JSON.stringify(body)}`).to.equal(400);
        expect(r.json.code).to.equal(400);
        expect(r.json.msg).to.match(msg);
        expect(r.json.data).to.equal(null);
      }
      const big = await call('POST', '/tx/api/v1/transfers/search', { address: '0x1', padding: 'x'.repeat(70 * 1024) });
      expect(big.status).to.equal(413);
      expect(big.json).to.deep.equal({ code: 413, msg: 'request body too large', data: null });
      // Single transaction: parameters are validated too.
      const hash = B.block.transactions[0].hash;
      for (const q of ['chain_type=ethereum', 'chain_id=1', 'chain_type=ethereum&chain_id=abc', 'chain_type=nope&chain_id=1', 'chain_type=ethereum&chain_id=1&chain_id=56']) {
        const r = await call('GET', `/tx/api/v1/transactions/${hash}?${q}`);
        expect(r.status, q).to.equal(400);
        expect(r.json.code).to.equal(400);
        expect(r.json.data).to.equal(null);
      }
      const noHash = await call('GET', '/transaction/transaction/tx?chain_type=ethereum&chain_id=1');
      expect(noHash.status).to.equal(400);
      expect(noHash.json.msg).to.match(/tx_hash is required/);
    });
  });

  describe('POST /tx/api/v1/transfers/search', () => {
    it('finds a plain ETH transfer by its sender and by its receiver, with the fields of the raw transaction', async () => {
      const raw = A.block.transactions.find((t: Json) => t.input === '0x' && BigInt(t.value) > 0n && t.to && onlyIn(A, t.from) && onlyIn(A, t.to));
      for (const address of [raw.from, raw.to]) {
        const data = await search({ address: address.toUpperCase().replace('0X', '0x'), chain_type: 'ethereum', chain_id: 1 });
        const rec = data.find((r) => r.tx_hash === raw.hash);
        expect(rec, address).to.not.equal(undefined);
        expect(rec.sender).to.equal(raw.from);
        expect(rec.receiver).to.equal(raw.to);
        expect(rec.amount).to.equal(BigInt(raw.value).toString());
        expect(rec.transfer_type).to.equal('native');
        expect(rec.height).to.equal(Number(A.block.number));
        expect(rec.tx_time).to.equal(Number(A.block.timestamp));
        expect(rec.chain_type).to.equal('ethereum');
        expect(rec.chain_id).to.equal(1);
        expect(rec.id).to.be.a('number');
        expect(data.map((r) => r.tx_hash).sort()).to.deep.equal(hashesOf(A, address.toLowerCase()).sort());
      }
    });

    it('pages the busiest address with the cursor until a short page: newest first, no duplicates, no gaps', async () => {
      const address = busiest(B);
      const expected = hashesOf(B, address);
      expect(expected.length).to.be.greaterThan(8); // a real paging exercise
      const { records, pages } = await allPages({ address, chain_type: 'ethereum', chain_id: 1, limit: 4 });
      const hashes = records.map((r) => r.tx_hash);
      expect(new Set(hashes).size).to.equal(hashes.length);
      expect(hashes.slice().sort()).to.deep.equal(expected.slice().sort());
      expect(strictlyDescending(records.map((r) => r.id))).to.equal(true);
      expect(pages).to.equal(Math.floor(expected.length / 4) + 1);
      // The same history in one page is the same list in the same order.
      const one = await search({ address, chain_type: 'ethereum', chain_id: 1, limit: 100 });
      expect(one.map((r) => r.tx_hash)).to.deep.equal(hashes);
      // id 0 (and "0") is the first page as well.
      expect((await search({ address, chain_type: 'ethereum', chain_id: '1', limit: '4', id: '0' })).map((r) => r.tx_hash)).to.deep.equal(hashes.slice(0, 4));
    });

    it('filters by token contract: only the transactions where the address moved that token', async () => {
      // The (address, token) pair with most transactions among addresses that also have others.
      const pairs = new Map<string, { address: string; token: string; n: number }>();
      for (const tx of B.block.transactions) {
        for (const [a, tokens] of partiesOf(B, tx)) {
          for (const t of tokens) {
            const p = pairs.get(`${a}:${t}`) ?? { address: a, token: t, n: 0 };
            p.n += 1;
            pairs.set(`${a}:${t}`, p);
          }
        }
      }
      const { address, token } = [...pairs.values()]
        .filter((p) => p.address !== '0x' + ZERO_ADDRESS && onlyIn(B, p.address) && p.n > 1 && p.n < hashesOf(B, p.address).length)
        .sort((x, y) => y.n - x.n)[0];
      const expected = txsOf(B, address).filter((tx) => partiesOf(B, tx).get(address)!.has(token)).map((t) => t.hash);
      expect(expected.length).to.be.greaterThan(0);
      expect(expected.length).to.be.lessThan(hashesOf(B, address).length);
      const { records } = await allPages({ address, chain_type: 'ethereum', chain_id: 1, token: token.toUpperCase().replace('0X', '0x'), limit: 3 });
      expect(records.map((r) => r.tx_hash).sort()).to.deep.equal(expected.slice().sort());
      for (const r of records) {
        expect(r.token_transfers.some((t: Json) => t.token_contract_address === token && (t.from_address === address || t.to_address === address))).to.equal(true);
      }
      // Across chains (no chain_type), the token filter still pages through the same set.
      const { records: anyChain } = await allPages({ address, token, limit: 2 });
      expect(anyChain.map((r) => r.tx_hash).sort()).to.deep.equal(expected.slice().sort());
      expect(strictlyDescending(anyChain.map((r) => r.id))).to.equal(true);
    });

    it('filters by tx_type ("" is no filter)', async () => {
      const address = busiest(B);
      const withTokens = txsOf(B, address).filter((tx) => transfersOf(receiptOf(B, tx.hash)).length > 0).map((t) => t.hash);
      const token = await search({ address, chain_type: 'ethereum', chain_id: 1, tx_type: 'token', limit: 100 });
      expect(token.map((r) => r.tx_hash).sort()).to.deep.equal(withTokens.slice().sort());
      expect(token.every((r) => r.transfer_type === 'token')).to.equal(true);
      const all = await search({ address, chain_type: 'ethereum', chain_id: 1, tx_type: '', limit: 100 });
      expect(all).to.have.length(hashesOf(B, address).length);
      const native = await search({ address, chain_type: 'ethereum', chain_id: 1, tx_type: 'NATIVE', limit: 100 });
      expect(native.every((r) => r.transfer_type === 'native')).to.equal(true);
      const nativeExpected = txsOf(B, address).filter((tx) => BigInt(tx.value) > 0n && transfersOf(receiptOf(B, tx.hash)).length === 0 && tx.input === '0x');
      expect(native.map((r) => r.tx_hash)).to.include.members(nativeExpected.map((t) => t.hash));
    });

    it('chain filters: all chains, one chain type (any case), one chain id, a chain without the address', async () => {
      const address = busiest(A);
      const expected = hashesOf(A, address).sort();
      const everywhere = await search({ address, limit: 100 });
      // Stored on ethereum and polygon: each transaction once per chain, newest (polygon) first.
      expect(everywhere.map((r) => `${r.chain_type}:${r.tx_hash}`).sort()).to.deep.equal([...expected.map((h) => `ethereum:${h}`), ...expected.map((h) => `polygon:${h}`)].sort());
      expect(strictlyDescending(everywhere.map((r) => r.id))).to.equal(true);
      expect(everywhere.slice(0, expected.length).every((r) => r.chain_type === 'polygon')).to.equal(true);
      const polygon = await search({ address, chain_type: 'POLYGON', limit: 100 });
      expect(polygon.map((r) => r.tx_hash).sort()).to.deep.equal(expected);
      expect(polygon.every((r) => r.chain_type === 'polygon' && r.chain_id === 137)).to.equal(true);
      const eth = await search({ address, chain_type: 'ethereum', chain_id: 1, limit: 100 });
      expect(eth.every((r) => r.chain_type === 'ethereum')).to.equal(true);
      expect(eth).to.have.length(expected.length);
      const byId = await search({ address, chain_id: 137, limit: 100 });
      expect(byId.map((r) => r.id)).to.deep.equal(polygon.map((r) => r.id));
      expect(await search({ address, chain_type: 'bsc', limit: 100 })).to.deep.equal([]);
      expect(await search({ address: `0x${RUN}${'0'.repeat(32)}`, limit: 100 })).to.deep.equal([]);
    });

    it('earlier layout POST /api/v1/transfer answers the same', async () => {
      const body = { address: busiest(B), chain_type: 'ethereum', chain_id: 1, limit: 5 };
      expect(await search(body, '/api/v1/transfer')).to.deep.equal(await search(body));
    });
  });

  describe('tx_type and token filters across a reorg and replays (fixture B under a tag of its own, at a height of its own)', () => {
    const eth = NET('ethereum-mainnet');
    // The (address, token) pair of R with most transactions, among addresses that also have others.
    const pairs = new Map<string, { address: string; token: string; n: number }>();
    for (const tx of R.block.transactions) {
      for (const [a, tokens] of partiesOf(R, tx)) {
        for (const t of tokens) {
          const p = pairs.get(`${a}:${t}`) ?? { address: a, token: t, n: 0 };
          p.n += 1;
          pairs.set(`${a}:${t}`, p);
        }
      }
    }
    const { address, token } = [...pairs.values()]
      .filter((p) => p.address !== '0x' + ZERO_ADDRESS && p.n > 2 && p.n < hashesOf(R, p.address).length)
      .sort((x, y) => y.n - x.n)[0];
    const pairTxs = (f: Fixture) => txsOf(f, address).filter((tx) => partiesOf(f, tx).get(address)!.has(token));

    // The reorg's block: every third transaction gone, and one of the pair's token transfers failed
    // there (a failed receipt has no logs: no token moved).
    const changed = pairTxs(R).find((tx) => R.block.transactions.indexOf(tx) % 3 !== 2)!;
    const kept = R.block.transactions.filter((_: Json, i: number) => i % 3 !== 2);
    const R2: Fixture = JSON.parse(
      JSON.stringify({
        block: { ...R.block, transactions: kept },
        receipts: R.receipts.filter((r) => kept.some((t: Json) => t.hash === r.transactionHash)).map((r) => (r.transactionHash === changed.hash ? { ...r, status: '0x0', logs: [] } : r)),
      }).replaceAll(R.block.hash, '0x' + 'f'.repeat(8) + R.block.hash.slice(10)),
    );

    /** What the failed transaction is in the reorg's block (it was a token transfer). */
    const failedType = typeOf(R2, changed);

    /** What the filters must answer for a stored fixture, read from its raw transactions and receipts. */
    const expectedOf = (f: Fixture) => {
      const hashes = (txs: Json[]) => txs.map((t) => t.hash).sort();
      const byToken = pairTxs(f);
      return {
        token: hashes(byToken),
        tokenAll: hashes(byToken),
        typeToken: hashes(txsOf(f, address).filter((tx) => typeOf(f, tx) === 'token')),
        typeTokenAll: hashes(txsOf(f, address).filter((tx) => typeOf(f, tx) === 'token')),
        typeOfFailed: hashes(txsOf(f, address).filter((tx) => typeOf(f, tx) === failedType)),
        tokenAndType: hashes(byToken.filter((tx) => typeOf(f, tx) === 'token')),
        tokenAndNative: hashes(byToken.filter((tx) => typeOf(f, tx) === 'native')),
      };
    };
    const shapes: Record<keyof ReturnType<typeof expectedOf>, Json> = {
      token: { address, token, chain_type: 'ethereum', chain_id: 1 },
      tokenAll: { address, token: token.toUpperCase().replace('0X', '0x') },
      typeToken: { address, tx_type: 'token', chain_type: 'ethereum', chain_id: 1 },
      typeTokenAll: { address, tx_type: 'token' },
      typeOfFailed: { address, tx_type: failedType, chain_type: 'ethereum' },
      tokenAndType: { address, token, tx_type: 'token' },
      tokenAndNative: { address, token, tx_type: 'native', chain_id: 1 },
    };

    /** Every filter's answer, every page followed (2 a page): newest first and no transaction twice, checked. */
    async function answers(): Promise<Record<string, Json[]>> {
      const out: Record<string, Json[]> = {};
      for (const [label, body] of Object.entries(shapes)) {
        const { records } = await allPages({ ...body, limit: 2 });
        const hashes = records.map((r) => r.tx_hash);
        expect(new Set(hashes).size, `${label}: no duplicates`).to.equal(hashes.length);
        expect(strictlyDescending(records.map((r) => r.id)), `${label}: newest first`).to.equal(true);
        out[label] = records;
      }
      return out;
    }
    const hashSets = (a: Record<string, Json[]>) => Object.fromEntries(Object.entries(a).map(([k, v]) => [k, v.map((r) => r.tx_hash).sort()]));

    let first: Record<string, Json[]>;
    let reorged: Record<string, Json[]>;

    it('answer exactly the transactions the raw block says, per chain and across chains, alone and combined', async () => {
      await storeFixture(R, eth, R_HEIGHT);
      const expected = expectedOf(R);
      expect(expected.token.length).to.be.greaterThan(2);
      expect(expected.typeToken.length).to.be.lessThan(hashesOf(R, address).length);
      first = await answers();
      expect(hashSets(first)).to.deep.equal(expected);
      for (const r of first.tokenAndType) expect(r.transfer_type).to.equal('token');
    });

    it('after a reorg: transactions of the replaced block are gone, the one that failed there has left the token filters', async () => {
      await storeFixture(R2, eth, R_HEIGHT);
      const expected = expectedOf(R2);
      expect(expected.token).to.not.include(changed.hash);
      expect(expected.token.length).to.be.greaterThan(0);
      expect(expected.token.length).to.be.lessThan(first.token.length);
      expect(expected.typeOfFailed).to.include(changed.hash);
      reorged = await answers();
      expect(hashSets(reorged)).to.deep.equal(expected);
      const lost = R.block.transactions.filter((_: Json, i: number) => i % 3 === 2).map((t: Json) => t.hash);
      for (const records of Object.values(reorged)) expect(records.map((r) => r.tx_hash)).to.not.include.members(lost);
      // The failed transaction is still the address's, as what it now is.
      const all = await search({ address, chain_type: 'ethereum', chain_id: 1, limit: 100 });
      expect(all.find((r) => r.tx_hash === changed.hash)).to.include({ tx_status: 'failed', transfer_type: typeOf(R2, changed) });
    });

    it('a replay of the new block answers the same pages; a reorg back answers what the first block did', async () => {
      await storeFixture(R2, eth, R_HEIGHT);
      expect(await answers()).to.deep.equal(reorged);
      await storeFixture(R, eth, R_HEIGHT);
      expect(await answers()).to.deep.equal(first);
      await storeFixture(R, eth, R_HEIGHT);
      expect(await answers()).to.deep.equal(first);
    });
  });

  describe('POST /tx/api/v1/transfers/multi-chain', () => {
    it('aggregates groups of several chains into one newest-first list without duplicates', async () => {
      const shared = B.block.transactions.find((t: Json) => t.to && t.from !== t.to && onlyIn(B, t.from) && onlyIn(B, t.to) && hashesOf(B, t.from).length > 1);
      const bscSender = BSC.block.transactions[0].from;
      const body = {
        addresses: [
          { chain_type: 'ethereum', chain_id: 1, address: [shared.from, shared.to.toUpperCase().replace('0X', '0x')] },
          { chain_type: 'BSC', chain_id: '97', address: [bscSender] },
        ],
        limit: 100,
      };
      const expected = [...new Set([...hashesOf(B, shared.from), ...hashesOf(B, shared.to)])].map((h) => `ethereum:${h}`);
      expected.push(...hashesOf(BSC, bscSender).map((h) => `bsc:${h}`));
      const r = await call('POST', '/tx/api/v1/transfers/multi-chain', body);
      expect(r.status).to.equal(200);
      expect(r.json.code).to.equal(1);
      const got = (r.json.data as Json[]).map((x) => `${x.chain_type}:${x.tx_hash}`);
      expect(new Set(got).size).to.equal(got.length);
      expect(got.slice().sort()).to.deep.equal(expected.sort());
      expect(got.filter((g) => g === `ethereum:${shared.hash}`)).to.have.length(1); // both addresses are in it, listed once
      expect(strictlyDescending((r.json.data as Json[]).map((x) => x.id))).to.equal(true);
      // BSC was stored last: its transactions come first.
      expect(got[0].startsWith('bsc:')).to.equal(true);

      const { records } = await allPages({ ...body, limit: 3 }, '/tx/api/v1/transfers/multi-chain');
      expect(records.map((x) => `${x.chain_type}:${x.tx_hash}`)).to.deep.equal(got);
      const alias = await call('POST', '/api/v1/transfer/multiple', body);
      expect(alias.json).to.deep.equal(r.json);
    });
  });

  describe('POST /tx/api/v1/transactions/batch-get', () => {
    it('one hash (without 0x, any case) and many (request order, unknown ones skipped)', async () => {
      const raw = B.block.transactions[5];
      const one = await call('POST', '/tx/api/v1/transactions/batch-get', { chain_type: 'Ethereum', chain_id: 1, tx_hash: raw.hash.slice(2).toUpperCase() });
      expect(one.status).to.equal(200);
      expect(one.json.code).to.equal(1);
      expect(one.json.data).to.have.length(1);
      const rec = one.json.data[0];
      expect(rec.tx_hash).to.equal(raw.hash);
      expect(rec.sender).to.equal(raw.from);
      expect(rec.nonce).to.equal(BigInt(raw.nonce).toString());
      expect(rec.gas_used).to.equal(BigInt(receiptOf(B, raw.hash).gasUsed).toString());

      const wanted = [B.block.transactions[9].hash, '0x' + 'cd'.repeat(32), A.block.transactions[0].hash, B.block.transactions[2].hash];
      const many = await call('POST', '/tx/api/v1/transactions/batch-get', { chain_type: 'ethereum', chain_id: '1', tx_hash: wanted });
      expect(many.json.data.map((r: Json) => r.tx_hash)).to.deep.equal([wanted[0], wanted[2], wanted[3]]);
      // Chain-scoped: A is stored on polygon too, B is not.
      const polygon = await call('POST', '/api/v1/transfer/details', { chain_type: 'polygon', chain_id: 137, tx_hash: wanted });
      expect(polygon.json.data.map((r: Json) => [r.chain_type, r.tx_hash])).to.deep.equal([['polygon', wanted[2]]]);
    });
  });

  describe('GET /tx/api/v1/transactions/:tx_hash (V2)', () => {
    it('answers a stored transaction in the V2 format, txTime in milliseconds, under both layouts', async () => {
      const raw = B.block.transactions.find((t: Json) => transfersOf(receiptOf(B, t.hash)).length > 0);
      const receipt = receiptOf(B, raw.hash);
      const r = await call('GET', `/tx/api/v1/transactions/${raw.hash.slice(2)}?chain_type=ETHEREUM&chain_id=1`);
      expect(r.status).to.equal(200);
      expect(r.json.code).to.equal(0);
      expect(r.json.msg).to.equal('success');
      const v2 = r.json.data;
      expect(v2.txhash).to.equal(raw.hash);
      expect(v2.txTime).to.equal(Number(B.block.timestamp) * 1000);
      expect(v2.height).to.equal(Number(B.block.number));
      expect(v2.sender).to.equal(raw.from);
      expect(v2.gasUsed).to.equal(BigInt(receipt.gasUsed).toString());
      expect(v2.txFee).to.equal((BigInt(receipt.gasUsed) * BigInt(receipt.effectiveGasPrice)).toString());
      expect(v2.txStatus).to.equal(receipt.status === '0x1' ? 'success' : 'failed');
      expect(v2.methodId).to.equal(raw.input.slice(0, 10));
      expect(v2.tokenTransferDetails.map((t: Json) => t.token_contract_address)).to.deep.equal(transfersOf(receipt).map((t) => t.token));
      expect(v2.listenAddress).to.equal(null);
      expect(v2.is_reorg_resend).to.equal(false);
      expect(v2).to.include.keys('fromDetails', 'toDetails', 'internalTransactionDetails', 'max_fee_per_gas', 'max_priority_fee_per_gas', 'fee_payer', 'transfer_type');
      expect(v2).to.not.have.any.keys('tx_hash', 'tx_time', 'token_transfers');
      const alias = await call('GET', `/transaction/transaction/tx?tx_hash=${raw.hash}&chain_type=ethereum&chain_id=1`);
      expect(alias.json).to.deep.equal(r.json);
      expect(node.calls).to.have.length(0); // stored: no origin call
    });

    it('fetches an unknown transaction from the chain origin, has chain-parser store it, and serves it from storage once the node is gone', async () => {
      const raw = C.block.transactions[0];
      const receipt = receiptOf(C, raw.hash);
      const first = await call('GET', `/tx/api/v1/transactions/${raw.hash}?chain_type=ethereum&chain_id=1`);
      expect(first.status, JSON.stringify(first.json)).to.equal(200);
      const v2 = first.json.data;
      expect(v2.txhash).to.equal(raw.hash);
      expect(v2.sender).to.equal(raw.from);
      expect(v2.receiver).to.equal(raw.to);
      expect(v2.txTime).to.equal(Number(C.block.timestamp) * 1000);
      expect(v2.height).to.equal(Number(C.block.number));
      expect(v2.gasUsed).to.equal(BigInt(receipt.gasUsed).toString());
      expect(v2.tokenTransferDetails.map((t: Json) => t.amount)).to.deep.equal([BigInt(receipt.logs[0].data).toString()]);
      expect(node.calls.map((c) => c.method).sort()).to.deep.equal(['eth_getBlockByNumber', 'eth_getTransactionByHash', 'eth_getTransactionReceipt']);

      // Stored by chain-parser with its address index: list endpoints see it a moment later.
      await waitFor(async () => (await search({ address: raw.from, chain_type: 'ethereum', chain_id: 1 })).some((r) => r.tx_hash === raw.hash), {
        timeoutMs: 30_000,
        what: 'the fetched transaction in the sender\'s history',
      });

      await node.stop();
      const again = await call('GET', `/tx/api/v1/transactions/${raw.hash}?chain_type=ethereum&chain_id=1`);
      expect(again.status).to.equal(200);
      expect(again.json.data).to.deep.equal(v2);
    });

    it('origin down: 502 for no_cache and for a transaction not stored', async () => {
      const stored = C.block.transactions[0].hash;
      const r = await call('GET', `/tx/api/v1/transactions/${stored}?chain_type=ethereum&chain_id=1&no_cache=true`);
      expect(r.status).to.equal(502);
      expect(r.json.code).to.equal(502);
      // A fixed text: the socket error (the node's address and port) goes to the log only.
      expect(r.json).to.deep.equal({ code: 502, msg: 'chain origin of ethereum-mainnet failed', data: null });
      const missing = await call('GET', `/tx/api/v1/transactions/${C.block.transactions[1].hash}?chain_type=ethereum&chain_id=1`);
      expect(missing.status).to.equal(502);
    });

    it('no_cache=1 goes to the origin even for a stored transaction; the origin\'s "not found" is data null', async () => {
      await node.start(node.port);
      node.calls = [];
      const raw = A.block.transactions[1];
      const r = await call('GET', `/tx/api/v1/transactions/${raw.hash}?chain_type=ethereum&chain_id=1&no_cache=1`);
      expect(r.status).to.equal(200);
      expect(r.json.data.txhash).to.equal(raw.hash);
      expect(r.json.data.sender).to.equal(raw.from);
      expect(node.calls.filter((c) => c.method === 'eth_getTransactionByHash').map((c) => c.params[0])).to.deep.equal([raw.hash]);

      const unknown = '0x' + RUN.repeat(8);
      const none = await call('GET', `/tx/api/v1/transactions/${unknown}?chain_type=ethereum&chain_id=1`);
      expect(none.status).to.equal(200);
      expect(none.json).to.deep.equal({ code: 0, msg: 'success', data: null });
      // A hash that cannot exist on the chain is null without asking anyone.
      node.calls = [];
      const impossible = await call('GET', '/tx/api/v1/transactions/0x1234?chain_type=ethereum&chain_id=1');
      expect(impossible.json).to.deep.equal({ code: 0, msg: 'success', data: null });
      expect(node.calls).to.have.length(0);
    });

    it('origin timeout: 504 quickly, well inside the 15 s request limit', async () => {
      node.mode = 'hang';
      const started = Date.now();
      const r = await call('GET', `/tx/api/v1/transactions/${C.block.transactions[1].hash}?chain_type=ethereum&chain_id=1`);
      const took = Date.now() - started;
      expect(r.status).to.equal(504);
      expect(r.json).to.deep.equal({ code: 504, msg: 'chain origin of ethereum-mainnet did not answer in time', data: null });
      expect(took).to.be.below(5_000);
      node.mode = 'ok';
    });

    it('counts origin fetches by outcome on /metrics', async () => {
      const text = await (await fetch(`${opsBase}/metrics`)).text();
      const samples = parsePrometheusText(text).samples.filter((x) => x.name === 'chainpipe_tx_origin_fetch_total' && x.labels.network === 'ethereum-mainnet');
      const count = (outcome: string) => samples.find((x) => x.labels.outcome === outcome)?.value ?? 0;
      // found: the first fetch and the no_cache one; failed: the two calls while the node was down.
      expect(count('found')).to.equal(2);
      expect(count('not_found')).to.equal(1);
      expect(count('failed')).to.equal(2);
      expect(count('timeout')).to.equal(1);
    });
  });
});
