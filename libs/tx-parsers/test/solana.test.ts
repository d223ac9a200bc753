import { expect } from 'chai';
import { base58Decode, base58Encode } from '@chainpipe/chains';
import { readFixtureJson } from '@chainpipe/testing';
import { parseSolanaPayload } from '../src/solana';
import type { ChainContext, NormalizedTx, ParseResult } from '../src/types';

// Raw fixture access in tests: the expectations below are read from, or computed by walking, this JSON.
type Json = any;

const ctx: ChainContext = { chainType: 'solana', chainId: 1, family: 'svm', nativeSymbol: 'SOL', nativeDecimals: 9 };
const devnetCtx: ChainContext = { ...ctx, chainId: 103 };

const SOL_TRANSFER = 'solana/sol-mainnet-slot399683256.getTransaction_jsonParsed_sol-transfer_2kHbPUGz.json';
const SOL_2X = 'solana/sol-mainnet-slot419246800.getTransaction_jsonParsed_2x-sol-transfer_2msqMqeU.json';
const USDC = 'solana/sol-mainnet-slot419685246.getTransaction_jsonParsed_usdc-transferChecked_4LXpF3MC.json';
const ATA = 'solana/sol-devnet-slot464179372.getTransaction_jsonParsed_sol-transfer-plus-ata-create_4HobvUWL.json';
const WITH_SEED = 'solana/sol-devnet-slot464164464.getTransaction_jsonParsed_transferWithSeed_4zZKwjed.json';
const MANGO = 'solana/sol-mainnet-slot139493615.getTransaction_jsonParsed_21w7wVXW.json';
const DEVNET_PARSED = 'solana/sol-devnet-blockheight139015678.getBlock_jsonParsed_full.json';
const DEVNET_JSON = 'solana/sol-devnet-blockheight139015678.getBlock_json_full.json';
const SLOT_100M = 'solana/sol-mainnet-slot100000000.getBlock_jsonParsed_TRUNCATED-10tx.json';
const SLOT_241M = 'solana/sol-mainnet-slot241043141.getBlock_jsonParsed_TRUNCATED-1tx.json';

const SYSTEM = '11111111111111111111111111111111';
const TOKEN = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';
const VOTE = 'Vote111111111111111111111111111111111111111';
const ATA_PROGRAM = 'ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL';
const TOKEN_MOVES = new Set(['transfer', 'transferChecked', 'mintTo', 'mintToChecked', 'burn', 'burnChecked']);

function onlyTx(result: ParseResult): NormalizedTx {
  expect(result.issues).to.deep.equal([]);
  expect(result.blocks).to.have.length(1);
  expect(result.blocks[0].transactions).to.have.length(1);
  return result.blocks[0].transactions[0];
}

function parseOne(fixture: string, c: ChainContext = ctx): NormalizedTx {
  return onlyTx(parseSolanaPayload([readFixtureJson(fixture)], c));
}

/** All instructions of a raw tx in execution order (outer, then its inner ones). */
function rawInstructions(tx: Json): { ix: Json; outer: number }[] {
  const out: { ix: Json; outer: number }[] = [];
  const inner: Json[] = tx.meta?.innerInstructions ?? [];
  tx.transaction.message.instructions.forEach((ix: Json, i: number) => {
    out.push({ ix, outer: i });
    for (const g of inner.filter((g) => g.index === i)) for (const x of g.instructions) out.push({ ix: x, outer: i });
  });
  return out;
}

function pubkeys(tx: Json): string[] {
  return tx.transaction.message.accountKeys.map((k: Json) => (typeof k === 'string' ? k : k.pubkey));
}

/** Lamport change of an account over the tx, read from pre/postBalances. */
function lamportDelta(tx: Json, address: string): bigint {
  const i = pubkeys(tx).indexOf(address);
  return BigInt(tx.meta.postBalances[i]) - BigInt(tx.meta.preBalances[i]);
}

describe('solana parser: getTransaction (jsonParsed)', () => {
  it('single System transfer: native record with the instruction values', () => {
    const raw = readFixtureJson(SOL_TRANSFER).result;
    const t = parseOne(SOL_TRANSFER);
    const info = raw.transaction.message.instructions[0].parsed.info;
    expect(t.chain_type).to.equal('solana');
    expect(t.chain_id).to.equal(1);
    expect(t.tx_hash).to.equal(raw.transaction.signatures[0]);
    expect(t.height).to.equal(399683256); // result.slot
    expect(t.block_hash).to.equal(null); // getTransaction carries no blockhash
    expect(t.tx_time).to.equal(1770867996); // result.blockTime
    expect(t.tx_index).to.equal(775); // result.transactionIndex
    expect(t.tx_version).to.equal(null); // version "legacy"
    expect(t.transfer_type).to.equal('native');
    expect(t.sender).to.equal('4Y5YjAPB4hMdCsiFy7BaBSscyiAvB7cuAbhxnBZ5xmgy');
    expect(t.receiver).to.equal('3eF3iBQqi2DmDLS7o9y8gG7necF5VBbwYy5gqF7sh899');
    expect(t.amount).to.equal('24922118');
    expect(String(info.lamports)).to.equal(t.amount);
    // Cross-check with the balances: the receiver gained exactly the amount.
    expect(lamportDelta(raw, t.receiver!).toString()).to.equal(t.amount);
    expect(t.fee_payer).to.equal(pubkeys(raw)[0]);
    expect(t.tx_fee).to.equal('5000');
    expect(t.tx_status).to.equal('success');
    expect(t.symbol).to.equal('SOL');
    expect(t.decimals).to.equal(9);
    expect(t.gas_used).to.equal('150'); // meta.computeUnitsConsumed
    expect(t.token_transfers).to.deep.equal([]);
    expect(t.internal_transactions).to.deep.equal([
      {
        from_address: info.source,
        to_address: info.destination,
        amount: '24922118',
        tx_status: 'success',
        program_id: SYSTEM,
        instruction: 'transfer',
        description: null,
        instr_index: 0,
        depth: 1,
      },
    ]);
  });

  it('two System transfers behind advanceNonce: largest one on top, both in internal_transactions', () => {
    const raw = readFixtureJson(SOL_2X).result;
    const t = parseOne(SOL_2X);
    // instructions[3]: 105,673,070 → 9AcR…; instructions[4]: 30,923,508,650 → Ah6u…
    expect(t.transfer_type).to.equal('native');
    expect(t.sender).to.equal('5tzFkiKscXHK5ZXCGbXZxdw7gTjjD1mBwuoFbhUvuAi9');
    expect(t.receiver).to.equal('Ah6ubKzHJMDStLD1i6P51bugRMggARUhDCc8Gxfsg4sU');
    expect(t.amount).to.equal('30923508650');
    expect(t.tx_fee).to.equal('11000');
    const moves = t.internal_transactions.filter((i) => i.amount !== null);
    expect(moves.map((m) => [m.to_address, m.amount, m.instr_index])).to.deep.equal([
      ['9AcRtqNTy4wUD9KKuB2mKrP5n6U3i2dMqeJchrsQU4ke', '105673070', 3],
      ['Ah6ubKzHJMDStLD1i6P51bugRMggARUhDCc8Gxfsg4sU', '30923508650', 4],
    ]);
    // Each transfer matches the receiving account's balance change.
    for (const m of moves) expect(lamportDelta(raw, m.to_address!).toString()).to.equal(m.amount);
    expect(t.internal_transactions.map((i) => i.instruction)).to.deep.equal(['advanceNonce', null, null, 'transfer', 'transfer']);
  });

  it('USDC transferChecked: token record, owners from token balances', () => {
    const raw = readFixtureJson(USDC).result;
    const t = parseOne(USDC);
    expect(t.transfer_type).to.equal('token');
    expect(t.amount).to.equal('0'); // no SOL moved by an instruction
    expect(t.sender).to.equal('3V9bd3EN5aNuhE4RiHGbZ1eZakJ1F9cDb8V4YLjCG8cg'); // fee payer
    expect(t.receiver).to.equal(TOKEN); // first program after advanceNonce
    expect(t.tx_fee).to.equal('48370');
    expect(t.token_transfers).to.have.length(1);
    const tt = t.token_transfers[0];
    // postTokenBalances: accountIndex 3 owner 3V9bd…, accountIndex 4 owner B2v68…
    expect(tt).to.deep.equal({
      from_address: '3V9bd3EN5aNuhE4RiHGbZ1eZakJ1F9cDb8V4YLjCG8cg',
      to_address: 'B2v68t8MXb9zUms1VQKuCcvjrjKDK6fLd8ZngqmBGy1M',
      token_contract_address: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v',
      symbol: null,
      amount: '3800000',
      token_id: null,
      from_token_address: '2e3Eb9tkT8252WhFR26Xz6SKoiatJScuMW1BHgGqPvvc',
      to_token_address: 'Efc6bp3wVC2iQpewxRmKdZM8vzt9DCFFhL7EiHYNGunv',
      mint: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v',
      program_id: TOKEN,
      decimals: 6,
      is_from_contract: false,
      is_to_contract: false,
      standard: 'spl',
      log_index: 1,
    });
    // Cross-check with the token balances: the receiver's account grew by the amount.
    const pre = raw.meta.preTokenBalances.find((b: Json) => b.accountIndex === 4).uiTokenAmount.amount;
    const post = raw.meta.postTokenBalances.find((b: Json) => b.accountIndex === 4).uiTokenAmount.amount;
    expect((BigInt(post) - BigInt(pre)).toString()).to.equal(tt.amount);
  });

  it('SOL transfer + ATA createIdempotent: the top-level transfer wins, the inner rent transfer is listed', () => {
    const raw = readFixtureJson(ATA).result; // envelope without `jsonrpc`: just {result}
    const t = parseOne(ATA, devnetCtx);
    expect(t.chain_id).to.equal(103);
    expect(t.transfer_type).to.equal('native');
    expect(t.sender).to.equal('3FyK3hKfP32pihA9Y6AowD6eLKeHPrbhDUg98A5YXfwP');
    expect(t.receiver).to.equal('CXirU4FJDRmyFKB3K6N8Qd8Rxeaxi1osi7kDa1ZRGp8B');
    expect(t.amount).to.equal('1000000');
    expect(t.token_transfers).to.deep.equal([]); // ATA creation moves no tokens
    expect(t.internal_transactions).to.have.length(rawInstructions(raw).length);
    const inner = t.internal_transactions.filter((i) => i.depth === 2);
    expect(inner).to.have.length(raw.meta.innerInstructions[0].instructions.length);
    expect(inner.every((i) => i.instr_index === 1)).to.equal(true); // innerInstructions[0].index
    const rent = inner.find((i) => i.amount !== null)!;
    expect(rent).to.include({
      from_address: '3FyK3hKfP32pihA9Y6AowD6eLKeHPrbhDUg98A5YXfwP',
      to_address: '2sWE3tykvdEjNzLhVkNFCkDceWeVxFswVzBBeMSWKmGy',
      amount: '1148400',
      program_id: SYSTEM,
      instruction: 'transfer',
    });
    expect(t.internal_transactions[1]).to.include({ program_id: ATA_PROGRAM, instruction: 'createIdempotent', depth: 1 });
  });

  it('transferWithSeed: the seed-derived account is the sender', () => {
    const raw = readFixtureJson(WITH_SEED).result;
    const info = raw.transaction.message.instructions[0].parsed.info;
    const t = parseOne(WITH_SEED);
    expect(t.transfer_type).to.equal('native');
    expect(t.sender).to.equal(info.source);
    expect(t.sender).to.not.equal(info.sourceBase);
    expect(t.receiver).to.equal(info.destination);
    expect(t.amount).to.equal('50000000');
    expect(t.fee_payer).to.equal(info.sourceBase); // the base signs and pays
    expect(lamportDelta(raw, info.source).toString()).to.equal('-50000000');
  });

  it('Mango/Serum tx inside a JSON-RPC batch array: all 8 inner SPL transfers, resolved through token balances', () => {
    const batch = readFixtureJson(MANGO);
    const raw = batch[0].result;
    const t = onlyTx(parseSolanaPayload([batch], ctx));
    const expected = rawInstructions(raw).filter(
      ({ ix }) => ix.program === 'spl-token' && TOKEN_MOVES.has(ix.parsed?.type),
    );
    expect(expected).to.have.length(8);
    expect(t.transfer_type).to.equal('token');
    expect(t.tx_index).to.equal(null); // no transactionIndex in this old response
    expect(t.tx_version).to.equal(null); // no version field
    expect(t.token_transfers).to.have.length(8);
    const keys = pubkeys(raw);
    const balanceOf = (account: string) =>
      raw.meta.postTokenBalances.find((b: Json) => keys[b.accountIndex] === account);
    t.token_transfers.forEach((tt, i) => {
      const info = expected[i].ix.parsed.info;
      expect(tt.amount).to.equal(info.amount);
      expect(tt.from_token_address).to.equal(info.source);
      expect(tt.to_token_address).to.equal(info.destination);
      expect(tt.mint).to.equal(balanceOf(info.source).mint);
      expect(tt.from_address).to.equal(balanceOf(info.source).owner);
      expect(tt.to_address).to.equal(balanceOf(info.destination).owner);
      expect(tt.decimals).to.equal(balanceOf(info.source).uiTokenAmount.decimals);
      expect(tt.program_id).to.equal(TOKEN);
    });
    const logIndexes = t.token_transfers.map((tt) => tt.log_index!);
    expect([...logIndexes].sort((a, b) => a - b)).to.deep.equal(logIndexes);
    expect(new Set(logIndexes).size).to.equal(8);
    // No stackHeight in this response: inner instructions default to depth 2.
    expect(t.internal_transactions.filter((i) => i.depth === 2)).to.have.length(
      raw.meta.innerInstructions.reduce((n: number, g: Json) => n + g.instructions.length, 0),
    );
    // First instruction in the tx is a call to GDDMw…, not a ComputeBudget one: it is the receiver.
    expect(t.receiver).to.equal(raw.transaction.message.instructions[0].programId);
  });
});

describe('solana parser: getBlock', () => {
  it('devnet block (jsonParsed): votes skipped, slot estimated from parentSlot, all SPL transfers found', () => {
    const raw = readFixtureJson(DEVNET_PARSED).result;
    const result = parseSolanaPayload([readFixtureJson(DEVNET_PARSED)], devnetCtx);
    expect(result.issues).to.deep.equal([]);
    expect(result.blocks).to.have.length(1);
    const { block, transactions } = result.blocks[0];
    expect(block).to.deep.equal({
      height: raw.parentSlot + 1,
      hash: '5idCC85iPqQMHWB9bCwcjbSfHakFgq6YXWFxL6w8xs9t',
      parent_hash: 'BeSgJqfSEkmtQ6S42d2Y7qUXdfLSaXeS9DHQYqw1MLxe',
      time: 1657486664,
    });
    const isVote = (tx: Json) => tx.transaction.message.instructions.every((ix: Json) => ix.programId === VOTE);
    const votes = raw.transactions.filter(isVote).length;
    expect(votes).to.equal(2);
    expect(transactions).to.have.length(raw.transactions.length - votes);
    // tx_index keeps the position in the block (votes included), so it skips the vote positions.
    const expectedIndexes = raw.transactions.map((tx: Json, i: number) => (isVote(tx) ? -1 : i)).filter((i: number) => i >= 0);
    expect(transactions.map((t) => t.tx_index)).to.deep.equal(expectedIndexes);
    for (const t of transactions) {
      expect(t.height).to.equal(raw.parentSlot + 1);
      expect(t.block_hash).to.equal(raw.blockhash);
      expect(t.tx_time).to.equal(raw.blockTime);
      expect(t.tx_hash).to.equal(raw.transactions[t.tx_index!].transaction.signatures[0]);
      expect(t.tx_fee).to.equal(String(raw.transactions[t.tx_index!].meta.fee));
    }
    const splCount = raw.transactions
      .flatMap((tx: Json) => rawInstructions(tx))
      .filter(({ ix }: Json) => ix.program === 'spl-token' && TOKEN_MOVES.has(ix.parsed?.type)).length;
    expect(splCount).to.equal(11);
    expect(transactions.flatMap((t) => t.token_transfers)).to.have.length(splCount);
    // The spl-memo instruction: jsonParsed shows its text ("ping") as `parsed`.
    const memoTx = transactions.find((t) => t.tx_index === 24)!;
    expect(memoTx.internal_transactions[2]).to.include({ instruction: 'memo', description: 'ping' });
    expect(memoTx.tx_fee).to.equal('25000');
  });

  it('devnet block: json and jsonParsed encodings of the same block give the same records', () => {
    const parsed = parseSolanaPayload([readFixtureJson(DEVNET_PARSED)], devnetCtx);
    const json = parseSolanaPayload([readFixtureJson(DEVNET_JSON)], devnetCtx);
    expect(json.issues).to.deep.equal([]);
    expect(json.blocks[0].transactions.flatMap((t) => t.token_transfers)).to.have.length(11);
    expect(json).to.deep.equal(parsed);
  });

  it('json encoding: v0 loadedAddresses extend the account list', () => {
    const envelope = readFixtureJson(DEVNET_JSON);
    const baseline = parseSolanaPayload([readFixtureJson(DEVNET_JSON)], devnetCtx);
    for (const tx of envelope.result.transactions) {
      const keys: string[] = tx.transaction.message.accountKeys;
      // Move the last two static keys into the lookup-table lists: indexes stay the same.
      tx.meta.loadedAddresses = { writable: [keys[keys.length - 2]], readonly: [keys[keys.length - 1]] };
      tx.transaction.message.accountKeys = keys.slice(0, -2);
      tx.version = 0;
    }
    const moved = parseSolanaPayload([envelope], devnetCtx);
    expect(moved.issues).to.deep.equal([]);
    const strip = (r: ParseResult) => r.blocks[0].transactions.map((t) => ({ ...t, tx_version: null }));
    expect(strip(moved)).to.deep.equal(strip(baseline));
    expect(moved.blocks[0].transactions.every((t) => t.tx_version === 0)).to.equal(true);
    expect(moved.blocks[0].transactions.flatMap((t) => t.token_transfers)).to.have.length(11);
  });

  it('slot comes from batchStartRange + position when it is consistent with parentSlot', () => {
    const raw = readFixtureJson(DEVNET_PARSED).result;
    const start = raw.parentSlot + 7;
    const r1 = parseSolanaPayload([readFixtureJson(DEVNET_PARSED)], { ...devnetCtx, batchStartRange: start });
    expect(r1.blocks[0].block.height).to.equal(start);
    expect(r1.blocks[0].transactions[0].height).to.equal(start);
    // A null element (e.g. a skipped slot) still takes its position in the batch.
    const r2 = parseSolanaPayload([null, readFixtureJson(DEVNET_PARSED)], { ...devnetCtx, batchStartRange: start });
    expect(r2.issues).to.deep.equal([]);
    expect(r2.blocks[0].block.height).to.equal(start + 1);
    // A start at or below parentSlot is impossible for this block: fall back to parentSlot + 1.
    const r3 = parseSolanaPayload([readFixtureJson(DEVNET_PARSED)], { ...devnetCtx, batchStartRange: raw.parentSlot });
    expect(r3.blocks[0].block.height).to.equal(raw.parentSlot + 1);
  });

  it("slot of a block is its child's parentSlot when the next block links to it", () => {
    const raw = readFixtureJson(DEVNET_PARSED).result;
    // Synthetic child block (values made up for the test): its parentSlot says which slot `raw` had.
    const child = { blockhash: 'child', previousBlockhash: raw.blockhash, parentSlot: raw.parentSlot + 3, blockTime: raw.blockTime + 1, transactions: [] };
    const r = parseSolanaPayload([raw, child], { ...devnetCtx, batchStartRange: raw.parentSlot + 1 });
    // The child itself: batchStartRange + 1 = parentSlot + 2 is not above its own parentSlot
    // (parentSlot + 3), so it falls back to its parentSlot + 1.
    expect(r.blocks.map((b) => b.block.height)).to.deep.equal([raw.parentSlot + 3, raw.parentSlot + 4]);
  });

  it('mainnet slot 100000000 (truncated): vote txs (incl. 2 failed) emit nothing, the rest is parsed', () => {
    const raw = readFixtureJson(SLOT_100M);
    const result = parseSolanaPayload([raw], ctx);
    expect(result.issues).to.deep.equal([]);
    const isVote = (tx: Json) => tx.transaction.message.instructions.every((ix: Json) => ix.programId === VOTE);
    const votes = raw.transactions.filter(isVote);
    expect(votes).to.have.length(6);
    expect(votes.filter((tx: Json) => tx.meta.err !== null)).to.have.length(2);
    const txs = result.blocks[0].transactions;
    expect(txs).to.have.length(raw.transactions.length - votes.length);
    expect(result.blocks[0].block.height).to.equal(100000000); // parentSlot 99999999 + 1
    for (const t of txs) {
      expect(t.tx_status).to.equal('success');
      expect(t.tx_version).to.equal(null); // version "legacy"
    }
    // tx #6: Serum settle with an inner spl-token transfer; this old node gives no `owner` in token
    // balances, so the sender falls back to the instruction's authority and the receiver is unknown.
    const serum = txs.find((t) => t.tx_index === 6)!;
    const info = raw.transactions[6].meta.innerInstructions[0].instructions[0].parsed.info;
    expect(serum.token_transfers).to.have.length(1);
    expect(serum.token_transfers[0]).to.include({
      amount: info.amount,
      from_address: info.authority,
      to_address: null,
      from_token_address: info.source,
      to_token_address: info.destination,
      mint: 'z3dn17yLaGMKffVogeFHQ9zWVcXgqgf3PQnDsNs2g6M', // preTokenBalances accountIndex 7 (= source)
      decimals: 6,
    });
    // tx #7: System transfer of 6,977 lamports from an account to itself.
    const self = txs.find((t) => t.tx_index === 7)!;
    expect(self).to.include({
      transfer_type: 'native',
      sender: '7ivguYMpnUBMboByJbKc7z31fJMg2pXYQ4nNPziWLchZ',
      receiver: '7ivguYMpnUBMboByJbKc7z31fJMg2pXYQ4nNPziWLchZ',
      amount: '6977',
    });
  });

  it('mainnet slot 241043141: failed tx keeps status and fee, counts no transfers', () => {
    const raw = readFixtureJson(SLOT_241M);
    const t = onlyTx(parseSolanaPayload([raw], ctx));
    const tx = raw.transactions[0];
    expect(tx.meta.err).to.deep.equal({ InstructionError: [3, 'ProgramFailedToComplete'] });
    expect(t.tx_status).to.equal('failed');
    expect(t.tx_fee).to.equal('5000');
    expect(t.block_hash).to.equal('7UVhKXDoFXfQWHRRMNaXiEXiQsabDvU7oz4TRLHFuzd8');
    expect(t.height).to.equal(241043141); // parentSlot 241043140 + 1
    expect(t.token_transfers).to.deep.equal([]);
    expect(t.amount).to.equal('0');
    expect(t.transfer_type).to.equal('contract_call');
    expect(t.sender).to.equal('5yKF9m4HwZPA1cibk7JGEVtAGBL2Jx8PxcuB5EbHXRKq');
    expect(t.fee_payer).to.equal(t.sender);
    expect(t.gas_used).to.equal(String(tx.meta.computeUnitsConsumed));
    // What was attempted stays visible, marked failed.
    expect(t.internal_transactions).to.have.length(rawInstructions(tx).length);
    expect(t.internal_transactions.every((i) => i.tx_status === 'failed')).to.equal(true);
    expect(t.internal_transactions[0]).to.include({
      instruction: 'createAccountWithSeed',
      from_address: '5yKF9m4HwZPA1cibk7JGEVtAGBL2Jx8PxcuB5EbHXRKq',
      to_address: '9k9M5UZqZwSviDhPyK4QAcxgvCboCY1zMboVb8VMqp7W',
      amount: '12539280',
    });
  });
});

// --- json-encoding variants of the jsonParsed fixtures -------------------------------------------
// The node's `json` encoding carries the raw instruction bytes. These helpers rebuild them from the
// parsed info with the programs' documented layouts (System: bincode, u32 LE variant; SPL Token:
// u8 tag + LE fields), so the parser's decoder is checked against an independent encoder.

function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n);
  return b;
}
function u64(n: number | string): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(BigInt(n));
  return b;
}
function key(k: string): Buffer {
  const b = base58Decode(k);
  if (!b || b.length !== 32) throw new Error(`test data: not a 32-byte key ${k}`);
  return b;
}
function str(s: string): Buffer {
  return Buffer.concat([u64(Buffer.byteLength(s)), Buffer.from(s, 'utf8')]);
}

function encodeParsed(ix: Json): { data: Buffer; accounts: string[] } {
  const { type, info } = ix.parsed;
  const p = `${ix.program}:${type}`;
  switch (p) {
    case 'system:transfer':
      return { data: Buffer.concat([u32(2), u64(info.lamports)]), accounts: [info.source, info.destination] };
    case 'system:transferWithSeed':
      return {
        data: Buffer.concat([u32(11), u64(info.lamports), str(info.sourceSeed), key(info.sourceOwner)]),
        accounts: [info.source, info.sourceBase, info.destination],
      };
    case 'system:createAccount':
      return {
        data: Buffer.concat([u32(0), u64(info.lamports), u64(info.space), key(info.owner)]),
        accounts: [info.source, info.newAccount],
      };
    case 'system:createAccountWithSeed':
      return {
        data: Buffer.concat([u32(3), key(info.base), str(info.seed), u64(info.lamports), u64(info.space), key(info.owner)]),
        accounts: [info.source, info.newAccount, info.base],
      };
    case 'system:advanceNonce':
      return { data: u32(4), accounts: [info.nonceAccount, info.recentBlockhashesSysvar, info.nonceAuthority] };
    case 'system:allocate':
      return { data: Buffer.concat([u32(8), u64(info.space)]), accounts: [info.account] };
    case 'system:assign':
      return { data: Buffer.concat([u32(1), key(info.owner)]), accounts: [info.account] };
    case 'spl-token:transfer':
      return { data: Buffer.concat([Buffer.from([3]), u64(info.amount)]), accounts: [info.source, info.destination, info.authority] };
    case 'spl-token:transferChecked':
      return {
        data: Buffer.concat([Buffer.from([12]), u64(info.tokenAmount.amount), Buffer.from([info.tokenAmount.decimals])]),
        accounts: [info.source, info.mint, info.destination, info.authority],
      };
    case 'spl-token:initializeAccount':
      return { data: Buffer.from([1]), accounts: [info.account, info.mint, info.owner, info.rentSysvar] };
    case 'spl-token:initializeAccount3':
      return { data: Buffer.concat([Buffer.from([18]), key(info.owner)]), accounts: [info.account, info.mint] };
    case 'spl-token:getAccountDataSize':
      return { data: Buffer.from([21, 7, 0]), accounts: [info.mint] }; // extension 7 = immutableOwner
    case 'spl-token:initializeImmutableOwner':
      return { data: Buffer.from([22]), accounts: [info.account] };
    case 'spl-token:closeAccount':
      return { data: Buffer.from([9]), accounts: [info.account, info.destination, info.owner] };
    case 'spl-associated-token-account:create':
    case 'spl-associated-token-account:createIdempotent':
      return {
        data: Buffer.from(type === 'create' ? [0] : [1]),
        accounts: [info.source, info.account, info.wallet, info.mint, info.systemProgram, info.tokenProgram],
      };
    default:
      throw new Error(`test encoder: no layout for ${p}`);
  }
}

/** jsonParsed tx → the same tx in `json` encoding (accountKeys as strings, index-based instructions). */
function toJsonEncoding(tx: Json): Json {
  const keys = pubkeys(tx);
  const index = (k: string) => {
    const i = keys.indexOf(k);
    if (i < 0) throw new Error(`test data: ${k} not in accountKeys`);
    return i;
  };
  const convert = (ix: Json) => {
    const { data, accounts } = ix.parsed ? encodeParsed(ix) : { data: base58Decode(ix.data)!, accounts: ix.accounts };
    const out: Json = { programIdIndex: index(ix.programId), accounts: accounts.map(index), data: base58Encode(data) };
    if (ix.stackHeight !== undefined) out.stackHeight = ix.stackHeight;
    return out;
  };
  return {
    ...tx,
    meta: {
      ...tx.meta,
      innerInstructions: tx.meta.innerInstructions.map((g: Json) => ({ index: g.index, instructions: g.instructions.map(convert) })),
    },
    transaction: {
      ...tx.transaction,
      message: { ...tx.transaction.message, accountKeys: keys, instructions: tx.transaction.message.instructions.map(convert) },
    },
  };
}

describe('solana parser: json encoding decodes System and SPL Token instruction data', () => {
  const cases: [string, (f: Json) => Json][] = [
    [SOL_TRANSFER, (f) => f.result],
    [SOL_2X, (f) => f.result],
    [USDC, (f) => f.result],
    [ATA, (f) => f.result],
    [WITH_SEED, (f) => f.result],
    [SLOT_241M, (f) => f.transactions[0]],
  ];
  for (const [fixture, pick] of cases) {
    it(`${fixture.split('/')[1].split('.')[0]}: same record as jsonParsed`, () => {
      const parsedTx = pick(readFixtureJson(fixture));
      const fromParsed = onlyTx(parseSolanaPayload([parsedTx], ctx));
      const fromJson = onlyTx(parseSolanaPayload([toJsonEncoding(parsedTx)], ctx));
      // The ATA program is not decoded from raw data: only its instruction name differs.
      const names = fromParsed.internal_transactions.map((i) => (i.program_id === ATA_PROGRAM ? null : i.instruction));
      expect(fromJson.internal_transactions.map((i) => i.instruction)).to.deep.equal(names);
      const withoutNames = (t: NormalizedTx) => ({
        ...t,
        internal_transactions: t.internal_transactions.map((i) => ({ ...i, instruction: null })),
      });
      expect(withoutNames(fromJson)).to.deep.equal(withoutNames(fromParsed));
    });
  }
});

describe('solana parser: fallbacks, envelopes, determinism', () => {
  it('token movements come from token balances when no token instruction is readable', () => {
    const raw = readFixtureJson(USDC).result;
    // Hide the instruction: the token program call becomes an opaque one.
    const ix = raw.transaction.message.instructions[1];
    raw.transaction.message.instructions[1] = { programId: 'Unknown1111111111111111111111111111111111111', accounts: [], data: '' };
    const t = onlyTx(parseSolanaPayload([raw], ctx));
    expect(t.token_transfers).to.have.length(1);
    // Balance deltas: accountIndex 3 (owner 3V9bd…) −3.8 USDC, accountIndex 4 (owner B2v68…) +3.8 USDC.
    expect(t.token_transfers[0]).to.deep.include({
      from_address: '3V9bd3EN5aNuhE4RiHGbZ1eZakJ1F9cDb8V4YLjCG8cg',
      to_address: 'B2v68t8MXb9zUms1VQKuCcvjrjKDK6fLd8ZngqmBGy1M',
      from_token_address: ix.parsed.info.source,
      to_token_address: ix.parsed.info.destination,
      amount: ix.parsed.info.tokenAmount.amount,
      mint: ix.parsed.info.mint,
      decimals: 6,
      program_id: TOKEN,
      log_index: null,
    });
  });

  it('SOL movement comes from balance deltas (fee given back) when no System instruction moved lamports', () => {
    const raw = readFixtureJson(SOL_TRANSFER).result;
    raw.transaction.message.instructions[0] = { programId: 'Unknown1111111111111111111111111111111111111', accounts: [], data: '' };
    const t = onlyTx(parseSolanaPayload([raw], ctx));
    // preBalances/postBalances: payer −24,927,118 (= 24,922,118 + fee 5,000), receiver +24,922,118.
    expect(t).to.include({
      transfer_type: 'native',
      sender: '4Y5YjAPB4hMdCsiFy7BaBSscyiAvB7cuAbhxnBZ5xmgy',
      receiver: '3eF3iBQqi2DmDLS7o9y8gG7necF5VBbwYy5gqF7sh899',
      amount: '24922118',
    });
    expect(t.internal_transactions[0].amount).to.equal(null);
  });

  it('JSON-RPC errors and unknown elements become issues; the rest still parses', () => {
    const result = parseSolanaPayload(
      [
        { jsonrpc: '2.0', id: 1, error: { code: -32007, message: 'Slot 5 was skipped' } },
        readFixtureJson(SOL_TRANSFER),
        42,
        { hello: 'world' },
      ],
      ctx,
    );
    expect(result.blocks).to.have.length(1);
    expect(result.blocks[0].transactions[0].amount).to.equal('24922118');
    expect(result.issues.map((i) => i.block_index)).to.deep.equal([0, 2, 3]);
    expect(result.issues[0].reason).to.contain('-32007');
  });

  it('a broken transaction becomes an issue, its block siblings still parse', () => {
    const raw = readFixtureJson(DEVNET_PARSED);
    raw.result.transactions[1].transaction.signatures = [];
    raw.result.transactions[2].transaction = ['AAAA', 'base64'];
    const result = parseSolanaPayload([raw], devnetCtx);
    expect(result.issues.map((i) => [i.block_index, i.tx_index])).to.deep.equal([
      [0, 1],
      [0, 2],
    ]);
    expect(result.blocks[0].transactions).to.have.length(23 - 2);
  });

  it('getTransaction results of one slot share one block entry', () => {
    const a = readFixtureJson(SOL_TRANSFER);
    const b = readFixtureJson(SOL_TRANSFER).result;
    b.transaction.signatures = ['otherSig'];
    b.transactionIndex = 776;
    const result = parseSolanaPayload([a, b, readFixtureJson(USDC)], ctx);
    expect(result.blocks.map((x) => [x.block.height, x.transactions.length])).to.deep.equal([
      [399683256, 2],
      [419685246, 1],
    ]);
  });

  it('is deterministic', () => {
    const items = () => [readFixtureJson(DEVNET_JSON), readFixtureJson(MANGO), readFixtureJson(SLOT_241M)];
    expect(parseSolanaPayload(items(), ctx)).to.deep.equal(parseSolanaPayload(items(), ctx));
  });
});
