import { expect } from 'chai';
import { parseBitcoinPayload } from '../src/bitcoin';
import type { NormalizedTx, ParseResult } from '../src/types';
import { BTC_CTX, block50001, prevouts50001, withPrevouts } from './bitcoin-core.test';

type Json = any;

const BLOCK_HASH = '000000001c920d495e1eeef2452b6d1c6c229a919b28196c103ecffebabee141';
const HEIGHT = 50001;
const TIME = 1270917100;

/**
 * Block 50001 written BY HAND in Blockbook `bb_getBlock` form (no real Blockbook fixture exists,
 * see SOURCES.md). Every value comes from btc-mainnet-50001.getblock_verbosity2.json and, for the
 * inputs, from the three getrawtransaction_verbose_* fixtures (each a coinbase paying 50.00000000
 * BTC at vout 0). BTC → satoshi strings converted by hand: 50 BTC = "5000000000", 100 BTC =
 * "10000000000". Blockbook conventions kept: satoshi strings, `omitempty` (so inputs spending
 * vout 0 have NO `vout` key), `isAddress` on every input/output, `valueIn`/`fees` per tx, and the
 * coinbase input carrying `coinbase` with no `txid`.
 */
export function blockbook50001(): Json {
  const common = { blockHash: BLOCK_HASH, blockHeight: HEIGHT, confirmations: 501929, blockTime: TIME };
  return {
    page: 1,
    totalPages: 1,
    itemsOnPage: 1000,
    hash: BLOCK_HASH,
    previousBlockHash: '000000001aeae195809d120b5d66a39c83eb48792e068f8ea1fea19d84a4278a',
    nextBlockHash: '000000002066d7f9b134c30b5005b7bf5fbfa52f279883f1fde793dcdc964266',
    height: HEIGHT,
    confirmations: 501929,
    size: 647,
    time: TIME,
    version: 1,
    merkleRoot: 'ee3a2d2b895cafacff526d06a55b55e049cf84a9735e4a63f7fd08f96d0f4649',
    nonce: '56717043',
    bits: '1c2a1115',
    difficulty: '6.085476906000794',
    txCount: 3,
    txs: [
      {
        txid: 'e1882d41800d96d0fddc196cd8d3f0b45d65b030c652d97eaba79a1174e64d58',
        version: 1,
        vin: [{ n: 0, isAddress: false, coinbase: '0415112a1c02cc00', sequence: 4294967295 }],
        vout: [
          {
            value: '5000000000',
            n: 0,
            hex: '4104c1b5671c8975087cc796d6ea73d2407591528b5c669106f9b6ab6ef6e373a57553e14866aaeffc44a9f58e5ee0c7faa7add7474f0a2c55a22cb40b949fdc933cac',
            addresses: ['1PkqKGbNLDdDJGveCcNUMV9CEFH77ADrPQ'],
            isAddress: true,
          },
        ],
        ...common,
        value: '5000000000',
        valueIn: '0',
        fees: '0',
      },
      {
        txid: '7940cdde4d713e171849efc6bd89939185be270266c94e92369e3877ad89455a',
        version: 1,
        vin: [
          {
            txid: '76a8d70a757be5055f60be076b683897cadaad6b7bdf78c43e39b9d59cb4a6ea',
            sequence: 4294967295,
            n: 0,
            addresses: ['1DoQeKfU3dYhN9bxMpFFcVUnufCPDqSPae'],
            isAddress: true,
            value: '5000000000',
          },
          {
            txid: '0dd0394c6240355f4e4b3c88028f678ed746cebee3b3e8509620733f018914c9',
            sequence: 4294967295,
            n: 1,
            addresses: ['1PZMgkF2x161qvfP7dhoWSEEU3SjnQE1m9'],
            isAddress: true,
            value: '5000000000',
          },
        ],
        vout: [
          {
            value: '10000000000',
            n: 0,
            hex: '76a914b5cd7aaed869cd5ccb45868e8666e7e934a2373688ac',
            addresses: ['1HaHTfmvoUW6i6nhJf8jJs6tU4cHNmBQHQ'],
            isAddress: true,
          },
        ],
        ...common,
        value: '10000000000',
        valueIn: '10000000000',
        fees: '0',
      },
      {
        txid: 'f84761459a00c6df3176ae5d94c99e69f25100d09548e5686bd0c354bb8cc60a',
        version: 1,
        vin: [
          {
            txid: '0d37522b89f991f8433b80f709ad31862a54435cd003f25732fe405e9db93216',
            sequence: 4294967295,
            n: 0,
            addresses: ['18dxbN6m8zxieN8F9BchXmhbeXUdFLr8fD'],
            isAddress: true,
            value: '5000000000',
          },
        ],
        vout: [
          {
            value: '5000000000',
            n: 0,
            hex: '76a914b5cd7aaed869cd5ccb45868e8666e7e934a2373688ac',
            addresses: ['1HaHTfmvoUW6i6nhJf8jJs6tU4cHNmBQHQ'],
            isAddress: true,
          },
        ],
        ...common,
        value: '5000000000',
        valueIn: '5000000000',
        fees: '0',
      },
    ],
  };
}

function txs(result: ParseResult): NormalizedTx[] {
  return result.blocks.flatMap((b) => b.transactions);
}

describe('bitcoin parser: Blockbook bb_getBlock JSON', () => {
  it('gives exactly the records of the same block read as Core verbosity 3', () => {
    const fromBlockbook = parseBitcoinPayload([blockbook50001()], BTC_CTX);
    const fromCore = parseBitcoinPayload([withPrevouts(block50001(), prevouts50001())], BTC_CTX);
    expect(fromBlockbook.issues).to.deep.equal([]);
    expect(fromBlockbook).to.deep.equal(fromCore);
  });

  it('gives the same transfers as Core verbosity 2, plus the input side', () => {
    const bb = txs(parseBitcoinPayload([blockbook50001()], BTC_CTX));
    const v2 = txs(parseBitcoinPayload([block50001()], BTC_CTX));
    expect(bb.map((t) => t.to_details)).to.deep.equal(v2.map((t) => t.to_details));
    expect(bb.map((t) => t.from_details.map((d) => [d.vin_index, d.pre_vout_index, d.ref_tx_hash]))).to.deep.equal(
      v2.map((t) => t.from_details.map((d) => [d.vin_index, d.pre_vout_index, d.ref_tx_hash])),
    );
    // What only Blockbook knows here: input values/addresses (hand-copied above) and so the fee.
    expect(bb[1].from_details.map((d) => d.amount)).to.deep.equal(['5000000000', '5000000000']);
    expect(bb[1]).to.include({ sender: '1DoQeKfU3dYhN9bxMpFFcVUnufCPDqSPae', tx_fee: '0' });
    expect(v2[1]).to.include({ sender: null, tx_fee: null });
  });

  it('reads an omitted `vout` as output 0 and an explicit one as given', () => {
    const block = blockbook50001();
    block.txs[2].vin[0].vout = 3;
    const [, spend2, spend1] = txs(parseBitcoinPayload([block], BTC_CTX));
    expect(spend2.from_details.map((d) => d.pre_vout_index)).to.deep.equal(['0', '0']);
    expect(spend1.from_details[0].pre_vout_index).to.equal('3');
  });

  it('recognises the coinbase without a `coinbase` member (first tx, one input, no txid)', () => {
    const block = blockbook50001();
    delete block.txs[0].vin[0].coinbase;
    const [coinbase] = txs(parseBitcoinPayload([block], BTC_CTX));
    expect(coinbase).to.include({ transfer_type: 'system', tx_fee: '0', sender: null, amount: '5000000000' });
    expect(coinbase.from_details).to.deep.equal([]);
  });

  it('ignores pseudo-addresses with isAddress false (synthetic OP_RETURN output)', () => {
    // Blockbook lists OP_RETURN outputs with addresses ["OP_RETURN (…)"] and isAddress false.
    const block = blockbook50001();
    block.txs[2].vout.push({ value: '0', n: 1, hex: '6a0474657374', addresses: ['OP_RETURN (test)'], isAddress: false });
    const [, , spend1] = txs(parseBitcoinPayload([block], BTC_CTX));
    expect(spend1.to_details[1]).to.deep.equal({ address: null, amount: '0', vout_index: '1', is_contract: false });
    expect(spend1.amount).to.equal('5000000000');
  });

  it('falls back to the Blockbook `fees` when an input value is missing', () => {
    const block = blockbook50001();
    delete block.txs[2].vin[0].value;
    block.txs[2].fees = '1234';
    const [, , spend1] = txs(parseBitcoinPayload([block], BTC_CTX));
    expect(spend1.from_details[0].amount).to.equal(null);
    expect(spend1.tx_fee).to.equal('1234');
  });

  it('reports a partial (paged) block but still parses the transactions it has', () => {
    const block = blockbook50001();
    block.totalPages = 2;
    block.txCount = 5;
    const result = parseBitcoinPayload([block], BTC_CTX);
    expect(txs(result)).to.have.length(3);
    expect(result.issues).to.have.length(1);
    expect(result.issues[0]).to.include({ block_index: 0, tx_hash: null, tx_index: null });
    expect(result.issues[0].reason).to.contain('3 of 5');
  });

  it('uses per-transaction block fields when the block header lacks them', () => {
    const block = blockbook50001();
    delete block.hash;
    delete block.height;
    delete block.time;
    const [coinbase] = txs(parseBitcoinPayload([block], BTC_CTX));
    expect(coinbase).to.include({ block_hash: BLOCK_HASH, height: HEIGHT, tx_time: TIME });
  });

  it('reads a lone Blockbook transaction (bb_getTx) and an unconfirmed one', () => {
    const tx = blockbook50001().txs[1];
    const confirmed = parseBitcoinPayload([tx], BTC_CTX);
    expect(confirmed.blocks[0].block).to.deep.equal({ height: HEIGHT, hash: BLOCK_HASH, parent_hash: null, time: TIME });
    expect(txs(confirmed)[0]).to.include({ tx_status: 'success', tx_index: null, amount: '10000000000', tx_fee: '0' });

    const pending = { ...tx, blockHeight: -1, blockTime: 0 };
    delete pending.blockHash;
    expect(txs(parseBitcoinPayload([pending], BTC_CTX))[0]).to.include({ tx_status: 'pending', height: null, tx_time: null });
  });
});
