import { expect } from 'chai';
import { readFixtureJson } from '@chainpipe/testing';
import { parseSolanaPayload } from '../src/solana';
import type { ChainContext, ParseResult } from '../src/types';

// Raw fixture mutation works on untyped JSON.
type Json = any;

const ctx: ChainContext = { chainType: 'solana', chainId: 1, family: 'svm', nativeSymbol: 'SOL', nativeDecimals: 9 };

const FIXTURES = [
  'solana/sol-mainnet-slot399683256.getTransaction_jsonParsed_sol-transfer_2kHbPUGz.json',
  'solana/sol-mainnet-slot419246800.getTransaction_jsonParsed_2x-sol-transfer_2msqMqeU.json',
  'solana/sol-mainnet-slot419685246.getTransaction_jsonParsed_usdc-transferChecked_4LXpF3MC.json',
  'solana/sol-devnet-slot464179372.getTransaction_jsonParsed_sol-transfer-plus-ata-create_4HobvUWL.json',
  'solana/sol-devnet-slot464164464.getTransaction_jsonParsed_transferWithSeed_4zZKwjed.json',
  'solana/sol-mainnet-slot139493615.getTransaction_jsonParsed_21w7wVXW.json',
  'solana/sol-devnet-blockheight139015678.getBlock_jsonParsed_full.json',
  'solana/sol-devnet-blockheight139015678.getBlock_json_full.json',
  'solana/sol-mainnet-slot100000000.getBlock_jsonParsed_TRUNCATED-10tx.json',
  'solana/sol-mainnet-slot241043141.getBlock_jsonParsed_TRUNCATED-1tx.json',
];

/** mulberry32: small seeded PRNG so every run mutates the same way. */
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
  1e30,
  Number.MAX_SAFE_INTEGER + 2,
  NaN,
  '',
  'not-a-key',
  '0x1a',
  '-5',
  '99999999999999999999999999999999999999999999',
  true,
  {},
  [],
  [null],
  [1, 2, 3],
  { type: 'transfer', info: null },
  { type: 'transfer', info: { lamports: 'x', source: 1 } },
  { parsed: { type: 'transferChecked', info: { tokenAmount: { amount: -1 } } } },
  '3Bxs4ffTu9T19DNF', // Base58 of System Transfer data (u32 2, u64 1000)
];

type Container = Record<string, unknown> | unknown[];

/** Every (container, key) pair of the JSON tree, so a mutation can hit any depth. */
function slots(root: unknown): [Container, string | number][] {
  const out: [Container, string | number][] = [];
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const node = stack.pop();
    if (Array.isArray(node)) {
      node.forEach((v, i) => {
        out.push([node, i]);
        stack.push(v);
      });
    } else if (node && typeof node === 'object') {
      for (const [k, v] of Object.entries(node)) {
        out.push([node as Record<string, unknown>, k]);
        stack.push(v);
      }
    }
  }
  return out;
}

function mutate(root: Json, rnd: () => number): void {
  const all = slots(root);
  if (all.length === 0) return;
  const [container, key] = all[Math.floor(rnd() * all.length)];
  const value = (container as Json)[key];
  const kind = Math.floor(rnd() * 5);
  if (kind === 0) {
    if (Array.isArray(container)) container.splice(key as number, 1);
    else delete container[key as string];
  } else if (kind === 1 && Array.isArray(value)) {
    value.length = Math.floor(rnd() * value.length);
  } else if (kind === 2 && typeof value === 'string') {
    (container as Json)[key] = value.slice(0, Math.floor(rnd() * value.length));
  } else {
    (container as Json)[key] = WRONG_VALUES[Math.floor(rnd() * WRONG_VALUES.length)];
  }
}

const DIGITS = /^[0-9]+$/;

function expectWellFormed(result: ParseResult): void {
  expect(result).to.be.an('object');
  expect(result.blocks).to.be.an('array');
  expect(result.issues).to.be.an('array');
  for (const issue of result.issues) {
    expect(issue.block_index).to.be.a('number');
    expect(issue.reason).to.be.a('string');
  }
  for (const b of result.blocks) {
    expect(b.block).to.be.an('object');
    expect(b.transactions).to.be.an('array');
    for (const t of b.transactions) {
      expect(t.tx_hash).to.be.a('string').and.not.equal('');
      for (const amount of [t.amount, t.tx_fee, t.gas_used]) {
        if (amount !== null) expect(amount).to.match(DIGITS);
      }
      expect(t.token_transfers).to.be.an('array');
      expect(t.internal_transactions).to.be.an('array');
      expect(t.from_details).to.be.an('array');
      expect(t.to_details).to.be.an('array');
      for (const tt of t.token_transfers) if (tt.amount !== null) expect(tt.amount).to.match(DIGITS);
      for (const it of t.internal_transactions) if (it.amount !== null) expect(it.amount).to.match(DIGITS);
    }
  }
  // Records go to JSON storage: nothing (e.g. a bigint) may break serialization.
  expect(() => JSON.stringify(result)).to.not.throw();
}

describe('solana parser: fuzz', function () {
  // Hundreds of parses of 300 KB blocks: allow for a busy machine.
  this.timeout(30000);
  const originals = FIXTURES.map((f) => readFixtureJson(f));

  it('never throws and stays well-formed on 400 seeded mutations of the real fixtures', () => {
    const rnd = prng(0x50_1a_4a);
    for (let n = 0; n < 400; n++) {
      const doc = structuredClone(originals[n % originals.length]);
      const rounds = 1 + Math.floor(rnd() * 4);
      for (let r = 0; r < rounds; r++) mutate(doc, rnd);
      const batchStartRange = rnd() < 0.5 ? Math.floor(rnd() * 5e8) : null;
      let result: ParseResult | undefined;
      expect(() => {
        result = parseSolanaPayload([doc], { ...ctx, batchStartRange });
      }, `mutation #${n}`).to.not.throw();
      expectWellFormed(result!);
    }
  });

  it('survives garbage items and contexts', () => {
    const garbage: unknown[] = [
      null,
      undefined,
      42,
      'block',
      [],
      [[[[[[]]]]]],
      { result: null },
      { result: { result: { result: { result: { result: {} } } } } },
      { jsonrpc: '2.0', error: 'boom' },
      { transactions: 'nope', blockhash: 5 },
      { transactions: [null, 1, 'x', { transaction: {} }, { transaction: { signatures: [''] } }] },
      { transaction: { signatures: ['sig'], message: null }, meta: 'bad', slot: -1 },
      { transaction: { signatures: ['sig'], message: { accountKeys: [{}, 7], instructions: [{ programIdIndex: 99 }] } }, meta: {} },
    ];
    for (const item of garbage) {
      expectWellFormed(parseSolanaPayload([item], ctx));
    }
    expectWellFormed(parseSolanaPayload(garbage, ctx));
    expectWellFormed(parseSolanaPayload(null as unknown as unknown[], ctx));
    expectWellFormed(parseSolanaPayload([originals[0]], null as unknown as ChainContext));
  });

  it('keeps the rest of a block when one transaction is mangled', () => {
    const doc = structuredClone(originals[6]); // devnet getBlock, jsonParsed: 23 non-vote txs
    doc.result.transactions[5] = { transaction: 7, meta: null };
    const result = parseSolanaPayload([doc], ctx);
    expectWellFormed(result);
    expect(result.issues).to.have.length(1);
    expect(result.issues[0].tx_index).to.equal(5);
    expect(result.blocks[0].transactions).to.have.length(22);
  });
});
