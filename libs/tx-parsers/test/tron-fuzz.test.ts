import { expect } from 'chai';
import { isTronBase58, tronBase58ToHex } from '@chainpipe/chains';
import { readFixtureJson } from '@chainpipe/testing';
import { parseTronPayload } from '../src/tron';
import type { ChainContext, ParseResult } from '../src/types';

type Json = any;

const ctx: ChainContext = { chainType: 'tron', chainId: 1, family: 'tvm', nativeSymbol: 'TRX', nativeDecimals: 6 };

/** Deterministic PRNG (mulberry32) so every run applies the same mutations. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WRONG_VALUES: unknown[] = [
  null,
  undefined,
  0,
  -1,
  1.5,
  1e308,
  Number.MAX_SAFE_INTEGER + 2,
  '',
  'zz',
  '0x',
  '0xzz',
  'T',
  'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6X',
  '41' + 'f'.repeat(40),
  'f'.repeat(400),
  '-5',
  true,
  {},
  [],
  [null],
  { result: null },
];

const fx = {
  hex: readFixtureJson('tron/tron-mainnet-61132092.wallet_getblockbynum_full_hex.json'),
  visible: readFixtureJson('tron/tron-mainnet-60836289.wallet_getblockbynum_full_visible.json'),
  info661: readFixtureJson('tron/tron-mainnet-60836289.wallet_gettransactioninfobyid_661f1df8_visible.json'),
  tx661: readFixtureJson('tron/tron-mainnet-60836289.wallet_gettransactionbyid_661f1df8_visible.json'),
  docsBlock: readFixtureJson('tron/tron-mainnet-30864544.wallet_getblockbynum_TRUNCATED-docs-example.json'),
  infos: readFixtureJson('tron/tron-mainnet-30864600.wallet_gettransactioninfobyblocknum_TRUNCATED-docs-example.json'),
  evmBlock: readFixtureJson('tron/tron-mainnet-39507235.jsonrpc_eth_getBlockByNumber_hashes_TRUNCATED-docs-example.json'),
  evmTx: readFixtureJson('tron/tron-mainnet-39507235.jsonrpc_eth_getTransactionByHash_usdt_0x9ff75c01-docs-example.json'),
  evmReceipt: readFixtureJson('tron/tron-mainnet-39507235.jsonrpc_eth_getTransactionReceipt_usdt_0x9ff75c01-docs-example.json'),
  trongrid: readFixtureJson('tron/tron-mainnet.trongrid_v1_accounts_transactions_25tx.json'),
} as Record<string, Json>;

/** Real payloads in every supported shape; the big blocks are cut to keep the fuzz fast. */
function basePayloads(): Json[][] {
  const hexSlice = { ...fx.hex, transactions: fx.hex.transactions.slice(0, 40) };
  const visibleSlice = { ...fx.visible, transactions: fx.visible.transactions.slice(10, 40) };
  const evmHex = (b: string): string => '0x' + (tronBase58ToHex(b) ?? '').slice(2);
  const receipt661 = {
    transactionHash: '0x' + fx.info661.id,
    status: '0x1',
    gasUsed: '0xfd7f',
    effectiveGasPrice: '0x1a4',
    logs: fx.info661.log.map((l: Json) => ({ address: evmHex(l.address), topics: l.topics.map((t: string) => '0x' + t), data: '0x' + l.data })),
  };
  return [
    [hexSlice],
    [visibleSlice, fx.info661],
    [{ block: visibleSlice, transaction_infos: [fx.info661] }],
    [{ native_block: visibleSlice, block: { ...fx.evmBlock.result, transactions: [] }, receipts: [receipt661] }],
    [{ block: { ...fx.evmBlock.result, transactions: [fx.evmTx.result] }, receipts: [fx.evmReceipt.result] }],
    [fx.evmBlock, fx.evmReceipt],
    [fx.docsBlock, fx.infos],
    [fx.trongrid],
    [fx.tx661, { jsonrpc: '2.0', id: 1, result: fx.docsBlock }],
  ];
}

type Slot = { parent: Json; key: string | number };

function slots(root: Json): Slot[] {
  const out: Slot[] = [];
  const walk = (node: Json): void => {
    if (Array.isArray(node)) node.forEach((v, i) => (out.push({ parent: node, key: i }), walk(v)));
    else if (node && typeof node === 'object') {
      for (const k of Object.keys(node)) {
        out.push({ parent: node, key: k });
        walk(node[k]);
      }
    }
  };
  walk(root);
  return out;
}

/** Fields the parser reads; half of the mutations aim at them so the fuzz reaches the decoders. */
const READ_KEYS = new Set([
  'amount', 'call_value', 'call_token_value', 'token_id', 'fee', 'fee_limit', 'number', 'timestamp', 'blockNumber',
  'block_timestamp', 'data', 'topics', 'log', 'logs', 'address', 'owner_address', 'to_address', 'contract_address',
  'asset_name', 'txID', 'hash', 'transactionHash', 'id', 'ret', 'contractRet', 'receipt', 'result', 'status', 'gasUsed',
  'effectiveGasPrice', 'gasPrice', 'value', 'input', 'from', 'to', 'type', 'contract', 'parameter', 'transactions',
]);

function mutate(root: Json, rand: () => number): void {
  let all = slots(root);
  if (rand() < 0.5) {
    const read = all.filter((s) => typeof s.key === 'string' && READ_KEYS.has(s.key));
    if (read.length > 0) all = read;
  }
  if (all.length === 0) return;
  const { parent, key } = all[Math.floor(rand() * all.length)];
  const current = parent[key];
  const op = Math.floor(rand() * 4);
  if (op === 0) {
    if (Array.isArray(parent)) parent.splice(key as number, 1);
    else delete parent[key];
  } else if (op === 1) {
    parent[key] = WRONG_VALUES[Math.floor(rand() * WRONG_VALUES.length)];
  } else if (op === 2 && Array.isArray(current)) {
    current.length = Math.floor(rand() * current.length);
  } else if (op === 2 && typeof current === 'string') {
    parent[key] = current.slice(0, Math.floor(rand() * current.length));
  } else {
    // Swap in another slot's value: right key, wrong-shaped (but realistic) content.
    parent[key] = structuredClone(all[Math.floor(rand() * all.length)].parent);
  }
}

const DIGITS = /^[0-9]+$/;

function expectAmount(v: unknown, what: string): void {
  if (v !== null) expect(typeof v === 'string' && DIGITS.test(v), `${what} = ${String(v)}`).to.equal(true);
}

function expectAddress(v: unknown, what: string): void {
  if (v !== null) expect(typeof v === 'string' && isTronBase58(v), `${what} = ${String(v)}`).to.equal(true);
}

function expectWellFormed(r: ParseResult): void {
  expect(r.blocks).to.be.an('array');
  expect(r.issues).to.be.an('array');
  for (const issue of r.issues) {
    expect(issue.block_index).to.be.a('number');
    expect(issue.reason).to.be.a('string');
    // The catch-all nets must stay unused: a caught exception means a narrowing bug.
    expect(issue.reason).to.not.match(/parse error|classification error/);
  }
  for (const b of r.blocks) {
    expect(b.transactions).to.be.an('array');
    expect(b.block.height === null || Number.isSafeInteger(b.block.height)).to.equal(true);
    for (const t of b.transactions) {
      expect(t.tx_hash).to.be.a('string').and.match(/^[0-9a-f]{64}$/);
      expect(t.chain_type).to.equal('tron');
      for (const f of ['amount', 'tx_fee', 'gas_limit', 'gas_used', 'gas_price', 'nonce'] as const) expectAmount(t[f], f);
      expectAddress(t.sender, 'sender');
      expectAddress(t.receiver, 'receiver');
      expect(t.token_transfers).to.be.an('array');
      expect(t.from_details).to.be.an('array');
      expect(t.to_details).to.be.an('array');
      expect(t.internal_transactions).to.be.an('array');
      for (const tt of t.token_transfers) {
        expectAmount(tt.amount, 'token amount');
        expectAddress(tt.from_address, 'token from');
        expectAddress(tt.to_address, 'token to');
      }
    }
  }
  expect(() => JSON.stringify(r)).to.not.throw();
}

describe('parseTronPayload fuzz', () => {
  it('never throws and stays well-formed under 400 seeded mutations of real payloads', function () {
    this.timeout(120_000);
    const rand = prng(0x7e0a);
    const bases = basePayloads();
    let records = 0;
    for (let i = 0; i < 400; i++) {
      const root = { items: structuredClone(bases[i % bases.length]) };
      const rounds = 1 + Math.floor(rand() * 3);
      for (let m = 0; m < rounds; m++) mutate(root, rand);
      const items = Array.isArray(root.items) ? root.items : [root.items];
      let result: ParseResult | undefined;
      expect(() => (result = parseTronPayload(items, ctx)), `case ${i}`).to.not.throw();
      expectWellFormed(result as ParseResult);
      expect(parseTronPayload(items, ctx), `case ${i} deterministic`).to.deep.equal(result);
      records += (result as ParseResult).blocks.reduce((n, b) => n + b.transactions.length, 0);
    }
    // Most mutations hit one field: the fuzz must still be parsing real records, not just junk.
    expect(records).to.be.greaterThan(1000);
  });

  it('survives non-array and hostile top-level input', () => {
    const cyclic: Json = { block: {} };
    cyclic.block.self = cyclic;
    const nested: Json = [];
    let cur = nested;
    for (let i = 0; i < 50; i++) cur = (cur[0] = []) as Json;
    for (const input of [null, undefined, 5, 'x', {}, [undefined, null, 1, 'x', true], [cyclic], [nested], [{ data: 'x' }]]) {
      let r: ParseResult | undefined;
      expect(() => (r = parseTronPayload(input as unknown as unknown[], ctx))).to.not.throw();
      expectWellFormed(r as ParseResult);
    }
  });
});
