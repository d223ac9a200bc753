import { expect } from 'chai';
import { readFixtureJson, solanaWireTransaction } from '@chainpipe/testing';
import { parseSolanaPayload } from '../src/solana';
import { decodeWireTransaction } from '../src/solana/wire';
import type { ChainContext, ParseResult } from '../src/types';

// Raw fixture access in tests: the expectations below are read from this JSON.
type Json = any;

/**
 * Binary encodings (base64 / base58) of the devnet block 139015678: the only Solana fixture that
 * exists in the `json` encoding, from which the wire bytes are written by the hand serializer of
 * libs/testing. That serializer refuses bytes over which the real signatures do not verify, so
 * the input below is the transaction as its signers signed it, not a re-encoding by our decoder.
 */
const ctx: ChainContext = { chainType: 'solana', chainId: 103, family: 'svm', nativeSymbol: 'SOL', nativeDecimals: 9 };
const DEVNET_PARSED = 'solana/sol-devnet-blockheight139015678.getBlock_jsonParsed_full.json';
const DEVNET_JSON = 'solana/sol-devnet-blockheight139015678.getBlock_json_full.json';
const TOKEN_MOVES = new Set(['transfer', 'transferChecked', 'mintTo', 'mintToChecked', 'burn', 'burnChecked']);

/** The json block with every transaction in a binary encoding, as getBlock(encoding) answers. */
function binaryBlock(encoding: 'base64' | 'base58'): Json {
  const env = readFixtureJson<Json>(DEVNET_JSON);
  for (const tx of env.result.transactions) tx.transaction = [solanaWireTransaction(tx, encoding), encoding];
  return env;
}

describe('solana parser: base64 / base58 transactions (wire format)', () => {
  const raw = readFixtureJson<Json>(DEVNET_JSON).result;
  const parsedRaw = readFixtureJson<Json>(DEVNET_PARSED).result;

  it('decodes every transaction of the block to exactly the json encoding of it, in both encodings', () => {
    expect(raw.transactions).to.have.length(25);
    for (const encoding of ['base64', 'base58'] as const) {
      for (const tx of raw.transactions) {
        const decoded = decodeWireTransaction(solanaWireTransaction(tx, encoding), encoding);
        expect(decoded, `${encoding} ${tx.transaction.signatures[0]}`).to.deep.equal({ transaction: tx.transaction, version: 'legacy' });
      }
    }
  });

  for (const encoding of ['base64', 'base58'] as const) {
    it(`a ${encoding} getBlock gives the records of the jsonParsed and the json getBlock`, () => {
      const binary = parseSolanaPayload([binaryBlock(encoding)], ctx);
      expect(binary.issues).to.deep.equal([]);
      expect(binary).to.deep.equal(parseSolanaPayload([readFixtureJson(DEVNET_PARSED)], ctx));
      expect(binary).to.deep.equal(parseSolanaPayload([readFixtureJson(DEVNET_JSON)], ctx));
      // From the jsonParsed fixture itself: its SPL token moves (the node decoded those), one
      // token transfer each; every record's hash is the first signature of its position.
      const { transactions } = binary.blocks[0];
      const splMoves = parsedRaw.transactions.flatMap((tx: Json) =>
        [...tx.transaction.message.instructions, ...tx.meta.innerInstructions.flatMap((g: Json) => g.instructions)].filter(
          (ix: Json) => ix.program === 'spl-token' && TOKEN_MOVES.has(ix.parsed?.type),
        ),
      );
      expect(splMoves).to.have.length(11);
      const amounts = (xs: (string | null)[]) => [...xs].sort();
      expect(amounts(transactions.flatMap((t) => t.token_transfers.map((x) => x.amount)))).to.deep.equal(
        amounts(splMoves.map((ix: Json) => ix.parsed.info.amount ?? ix.parsed.info.tokenAmount.amount)),
      );
      for (const t of transactions) expect(t.tx_hash).to.equal(parsedRaw.transactions[t.tx_index!].transaction.signatures[0]);
      // The spl-memo instruction of the last transaction: jsonParsed shows its text as `parsed`.
      const memo = parsedRaw.transactions[24].transaction.message.instructions.find((ix: Json) => ix.program === 'spl-memo');
      expect(transactions.find((t) => t.tx_index === 24)!.internal_transactions.map((x) => x.description)).to.include(memo.parsed);
    });
  }

  it('a base64 getTransaction with maxSupportedTransactionVersion: the same record as its jsonParsed answer', () => {
    const i = raw.transactions.findIndex((tx: Json) => tx.meta.postTokenBalances.length > 0);
    const slot = raw.parentSlot + 1;
    const answer = (tx: Json, transaction: unknown) => ({ blockTime: raw.blockTime, meta: tx.meta, slot, transaction, version: 'legacy' });
    const binary = parseSolanaPayload([answer(raw.transactions[i], [solanaWireTransaction(raw.transactions[i], 'base64'), 'base64'])], ctx);
    const parsed = parseSolanaPayload([answer(parsedRaw.transactions[i], parsedRaw.transactions[i].transaction)], ctx);
    expect(binary.issues).to.deep.equal([]);
    expect(binary).to.deep.equal(parsed);
    const record = binary.blocks[0].transactions[0];
    expect(record.tx_hash).to.equal(raw.transactions[i].transaction.signatures[0]);
    expect(record.tx_fee).to.equal(String(raw.transactions[i].meta.fee));
    expect(record.fee_payer).to.equal(raw.transactions[i].transaction.message.accountKeys[0]);
    expect(record.tx_version).to.equal(null);
  });

  it('v0: the message prefix gives the version, lookup tables are kept, loadedAddresses extend the keys', () => {
    // No v0 transaction exists in the json fixtures: the block's transactions are made v0 by moving
    // their last two static keys into lookup-table lists (indexes stay the same, as in
    // solana.test.ts). Signatures no longer match such edited messages, so they are not checked.
    const env = readFixtureJson<Json>(DEVNET_JSON);
    const table = raw.transactions[0].transaction.message.accountKeys[1];
    for (const tx of env.result.transactions) {
      const keys: string[] = tx.transaction.message.accountKeys;
      tx.meta.loadedAddresses = { writable: [keys[keys.length - 2]], readonly: [keys[keys.length - 1]] };
      tx.transaction.message.accountKeys = keys.slice(0, -2);
      tx.transaction.message.addressTableLookups = [{ accountKey: table, writableIndexes: [3], readonlyIndexes: [200] }];
      tx.version = 0;
      const wire = solanaWireTransaction(tx, 'base64', { verifySignatures: false });
      expect(decodeWireTransaction(wire, 'base64')).to.deep.equal({ transaction: tx.transaction, version: 0 });
      delete tx.version; // a node writes no version beside the bytes when not asked for one
      tx.transaction = [wire, 'base64'];
    }
    const moved = parseSolanaPayload([env], ctx);
    expect(moved.issues).to.deep.equal([]);
    expect(moved.blocks[0].transactions.every((t) => t.tx_version === 0)).to.equal(true);
    const strip = (r: ParseResult) => r.blocks[0].transactions.map((t) => ({ ...t, tx_version: null }));
    expect(strip(moved)).to.deep.equal(strip(parseSolanaPayload([readFixtureJson(DEVNET_JSON)], ctx)));
  });

  it('bytes that are not a transaction become an issue of that transaction, its siblings still parse', () => {
    const env = binaryBlock('base64');
    const good: string = env.result.transactions[3].transaction[0];
    const bytes = Buffer.from(good, 'base64');
    env.result.transactions[3].transaction = [Buffer.concat([bytes, Buffer.from([0])]).toString('base64'), 'base64'];
    env.result.transactions[4].transaction = [bytes.subarray(0, bytes.length - 5).toString('base64'), 'base64'];
    env.result.transactions[5].transaction = ['not base64!', 'base64'];
    env.result.transactions[6].transaction = [good, 'base32'];
    const result = parseSolanaPayload([env], ctx);
    expect(result.issues.map((x) => x.tx_index)).to.deep.equal([3, 4, 5, 6]);
    expect(result.issues[0].reason).to.match(/^base64 transaction: 1 bytes after the transaction message/);
    expect(result.issues[3].reason).to.equal('transaction in an unknown binary encoding');
    expect(result.blocks[0].transactions).to.have.length(23 - 4);
  });
});
