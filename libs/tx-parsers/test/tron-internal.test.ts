import { expect } from 'chai';
import { tronHexToBase58 } from '@chainpipe/chains';
import { readFixtureJson } from '@chainpipe/testing';
import { parseTronPayload } from '../src/tron';
import type { ChainContext, NormalizedTx } from '../src/types';

type Json = any;

// Tron internal transactions (TRX / TRC-10 moved by contracts). No real transaction info with a
// non-empty `internal_transactions` exists in the fixtures (the 25 TronGrid items all carry
// `internal_transactions: []`, the node infos none), so every input here is DERIVED from a real
// fixture by adding entries in the documented node / TronGrid forms; the expected values below
// are those added entries, read back, never the parser's output.

const ctx: ChainContext = { chainType: 'tron', chainId: 1, family: 'tvm', nativeSymbol: 'TRX', nativeDecimals: 6 };
const USDT = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';
const OWNER = 'TP4MZM8iDVEfRbtbvcidqVQBt4SQ9Pfi8R'; // owner_address of tx #20 (661f1df8…) of block 60836289

describe('parseTronPayload — internal transactions (derived inputs)', () => {
  const block: Json = readFixtureJson('tron/tron-mainnet-60836289.wallet_getblockbynum_full_visible.json');
  const baseInfo: Json = readFixtureJson('tron/tron-mainnet-60836289.wallet_gettransactioninfobyid_661f1df8_visible.json');
  // Derived: the real info 661f1df8 plus four internal transactions of the node's form (visible,
  // so addresses in Base58 like the rest of this info; TronGrid's hex form is read below):
  // 0: USDT contract → owner, 1,000,000 sun of TRX (note "call");
  // 1: USDT contract → owner, 5 units of TRC-10 1002000 (note "call");
  // 2: the same as 0 but `rejected: true` (reverted: not a transfer);
  // 3: an inner call without value (`callValueInfo: [{}]`, as nodes print it).
  const info: Json = {
    ...baseInfo,
    internal_transactions: [
      { hash: 'aa'.repeat(32), caller_address: USDT, transferTo_address: OWNER, callValueInfo: [{ callValue: 1_000_000 }], note: '63616c6c' },
      { hash: 'bb'.repeat(32), caller_address: USDT, transferTo_address: OWNER, callValueInfo: [{ callValue: 5, tokenId: '1002000' }], note: '63616c6c' },
      { hash: 'cc'.repeat(32), caller_address: USDT, transferTo_address: OWNER, callValueInfo: [{ callValue: 1_000_000 }], note: '63616c6c', rejected: true },
      { hash: 'dd'.repeat(32), caller_address: USDT, transferTo_address: USDT, callValueInfo: [{}], note: '63616c6c' },
    ],
  };
  const record = (infoObj: Json): NormalizedTx => parseTronPayload([block, infoObj], ctx).blocks[0].transactions.find((t) => t.tx_hash === infoObj.id)!;

  it('lists TRX and TRC-10 moved by contracts as internal transfers, without the rejected or value-less ones', () => {
    expect(record(info).internal_transactions).to.deep.equal([
      { from_address: USDT, to_address: OWNER, amount: '1000000', tx_status: 'success', program_id: null, instruction: 'call', description: 'TRX moved by a contract', instr_index: 0, depth: null },
      { from_address: USDT, to_address: OWNER, amount: '5', tx_status: 'success', program_id: '1002000', instruction: 'call', description: 'TRC-10 1002000 moved by a contract', instr_index: 1, depth: null },
    ]);
  });

  it('lists nothing for a reverted transaction', () => {
    const failed = { ...info, receipt: { ...info.receipt, result: 'REVERT' } };
    expect(record(failed).internal_transactions).to.deep.equal([]);
  });

  it('reads the TronGrid form of a list item (from/to hex, data.call_value, data.rejected)', () => {
    // Derived: the first real TronGrid item (18f5908a…, a TriggerSmartContract of owner 4179309a…
    // on contract 41a614f8…) with two internal transactions in TronGrid's form added: 2,500,000 sun
    // from the contract to the owner, and one rejected.
    const grid: Json = readFixtureJson('tron/tron-mainnet.trongrid_v1_accounts_transactions_25tx.json');
    const item = {
      ...grid.data[0],
      internal_transactions: [
        { internal_tx_id: 'ee'.repeat(32), from_address: '41a614f803b6fd780986a42c78ec9c7f77e6ded13c', to_address: '4179309abcff2cf531070ca9222a1f72c4a5136874', data: { note: '63616c6c', rejected: false, call_value: { _: 2_500_000 } } },
        { internal_tx_id: 'ff'.repeat(32), from_address: '41a614f803b6fd780986a42c78ec9c7f77e6ded13c', to_address: '4179309abcff2cf531070ca9222a1f72c4a5136874', data: { note: '63616c6c', rejected: true, call_value: { _: 9 } } },
      ],
    };
    const rec = parseTronPayload([item], ctx).blocks[0].transactions[0];
    expect(rec.internal_transactions.map((i) => [i.from_address, i.to_address, i.amount, i.program_id])).to.deep.equal([
      [tronHexToBase58('41a614f803b6fd780986a42c78ec9c7f77e6ded13c'), tronHexToBase58('4179309abcff2cf531070ca9222a1f72c4a5136874'), '2500000', null],
    ]);
  });
});
