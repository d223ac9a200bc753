import { expect } from 'chai';
import { type Random, collectSlots, deepClone, mutationOperators, pick, readFixtureJson, seededRandom } from '@chainpipe/testing';
import { parseSolanaPayload } from '../src/solana';
import type { ChainContext, ParseResult } from '../src/types';
import { expectWellFormedParseResult } from './support/parse-result';

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

const ops = mutationOperators(WRONG_VALUES);

function mutate(root: Json, rnd: Random): void {
  const all = collectSlots(root, 'stack');
  if (all.length === 0) return;
  const slot = pick(rnd, all);
  const kind = Math.floor(rnd() * 5);
  if (kind === 0) return ops.deleteKey(slot);
  if (kind === 1 && ops.truncateArray(slot, rnd)) return;
  if (kind === 2 && ops.truncateString(slot, rnd)) return;
  ops.wrongValue(slot, rnd);
}

function expectWellFormed(result: ParseResult): void {
  expectWellFormedParseResult(result, {
    amounts: ['amount', 'tx_fee', 'gas_used'],
    entryAmounts: ['token_transfers', 'internal_transactions'],
  });
}

describe('solana parser: fuzz', function () {
  // Hundreds of parses of 300 KB blocks: allow for a busy machine.
  this.timeout(30000);
  const originals = FIXTURES.map((f) => readFixtureJson(f));

  it('never throws and stays well-formed on 400 seeded mutations of the real fixtures', () => {
    const rnd = seededRandom(0x50_1a_4a);
    for (let n = 0; n < 400; n++) {
      const doc = deepClone(originals[n % originals.length]);
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
    const doc = deepClone(originals[6]); // devnet getBlock, jsonParsed: 23 non-vote txs
    doc.result.transactions[5] = { transaction: 7, meta: null };
    const result = parseSolanaPayload([doc], ctx);
    expectWellFormed(result);
    expect(result.issues).to.have.length(1);
    expect(result.issues[0].tx_index).to.equal(5);
    expect(result.blocks[0].transactions).to.have.length(22);
  });
});
