import { expect } from 'chai';
import { isTronBase58, tronBase58ToHex } from '@chainpipe/chains';
import { type Random, collectSlots, deepClone, mutationOperators, pick, readFixtureJson, seededRandom } from '@chainpipe/testing';
import { parseTronPayload } from '../src/tron';
import type { ChainContext, ParseResult } from '../src/types';
import { expectWellFormedParseResult } from './support/parse-result';

type Json = any;

const ctx: ChainContext = { chainType: 'tron', chainId: 1, family: 'tvm', nativeSymbol: 'TRX', nativeDecimals: 6 };

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

/** Fields the parser reads; half of the mutations aim at them so the fuzz reaches the decoders. */
const READ_KEYS = new Set([
  'amount', 'call_value', 'call_token_value', 'token_id', 'fee', 'fee_limit', 'number', 'timestamp', 'blockNumber',
  'block_timestamp', 'data', 'topics', 'log', 'logs', 'address', 'owner_address', 'to_address', 'contract_address',
  'asset_name', 'txID', 'hash', 'transactionHash', 'id', 'ret', 'contractRet', 'receipt', 'result', 'status', 'gasUsed',
  'effectiveGasPrice', 'gasPrice', 'value', 'input', 'from', 'to', 'type', 'contract', 'parameter', 'transactions',
]);

const ops = mutationOperators(WRONG_VALUES);

function mutate(root: Json, rand: Random): void {
  let all = collectSlots(root);
  if (rand() < 0.5) {
    const read = all.filter((s) => typeof s.key === 'string' && READ_KEYS.has(s.key));
    if (read.length > 0) all = read;
  }
  if (all.length === 0) return;
  const slot = pick(rand, all);
  const op = Math.floor(rand() * 4);
  if (op === 0) return ops.deleteKey(slot);
  if (op === 1) return ops.wrongValue(slot, rand);
  if (op === 2 && ops.truncate(slot, rand)) return;
  // Swap in another slot's value: right key, wrong-shaped (but realistic) content.
  slot.parent[slot.key] = deepClone(pick(rand, all).parent);
}

function expectAddress(v: unknown, what: string): void {
  if (v !== null) expect(typeof v === 'string' && isTronBase58(v), `${what} = ${String(v)}`).to.equal(true);
}

function expectWellFormed(r: ParseResult): void {
  expectWellFormedParseResult(r, {
    txHash: /^[0-9a-f]{64}$/,
    amounts: ['amount', 'tx_fee', 'gas_limit', 'gas_used', 'gas_price', 'nonce'],
    entryAmounts: ['token_transfers'],
  });
  for (const issue of r.issues) {
    // The catch-all nets must stay unused: a caught exception means a narrowing bug.
    expect(issue.reason).to.not.match(/parse error|classification error/);
  }
  for (const b of r.blocks) {
    expect(b.block.height === null || Number.isSafeInteger(b.block.height)).to.equal(true);
    for (const t of b.transactions) {
      expect(t.chain_type).to.equal('tron');
      expectAddress(t.sender, 'sender');
      expectAddress(t.receiver, 'receiver');
      for (const tt of t.token_transfers) {
        expectAddress(tt.from_address, 'token from');
        expectAddress(tt.to_address, 'token to');
      }
    }
  }
}

describe('parseTronPayload fuzz', () => {
  it('never throws and stays well-formed under 400 seeded mutations of real payloads', function () {
    this.timeout(120_000);
    const rand = seededRandom(0x7e0a);
    const bases = basePayloads();
    let records = 0;
    for (let i = 0; i < 400; i++) {
      const root = { items: deepClone(bases[i % bases.length]) };
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
