import { expect } from 'chai';
import { readFixtureJson } from '@chainpipe/testing';
import { parseBitcoinPayload } from '../src/bitcoin';
import type { ChainContext, NormalizedTx, ParseResult } from '../src/types';

type Json = any;

export const BTC_CTX: ChainContext = {
  chainType: 'bitcoin',
  chainId: 1,
  family: 'utxo',
  nativeSymbol: 'BTC',
  nativeDecimals: 8,
};

const DIR = 'bitcoin/';
const SUBSIDY_766K = 625_000_000; // 6.25 BTC block subsidy (third halving epoch, blocks 630000–839999)

/**
 * The tests' own BTC → satoshi conversion, deliberately a different method than the parser's:
 * the float product is off by far less than 0.5 sat for any amount below 21e6 BTC, so rounding
 * it gives the exact value.
 */
function sats(btc: number): number {
  return Math.round(btc * 1e8);
}

function txs(result: ParseResult): NormalizedTx[] {
  return result.blocks.flatMap((b) => b.transactions);
}

function clone<T>(v: T): T {
  return JSON.parse(JSON.stringify(v)) as T;
}

/** Builds the verbosity-3 form of a verbosity-2 block: each input gets its spent output as `prevout`. */
export function withPrevouts(block: Json, prevTxs: Json[]): Json {
  const byId = new Map(prevTxs.map((t) => [t.txid, t]));
  const out = clone(block);
  for (const tx of out.tx) {
    for (const vin of tx.vin) {
      if (vin.coinbase !== undefined) continue;
      const spent = byId.get(vin.txid).vout.find((o: Json) => o.n === vin.vout);
      vin.prevout = { value: spent.value, scriptPubKey: spent.scriptPubKey };
    }
  }
  return out;
}

export function block50001(): Json {
  return readFixtureJson(DIR + 'btc-mainnet-50001.getblock_verbosity2.json');
}

export function prevouts50001(): Json[] {
  return ['76a8d70a', '0dd0394c', '0d37522b'].map((id) =>
    readFixtureJson(DIR + `btc-mainnet.getrawtransaction_verbose_${id}.json`),
  );
}

const PREVOUT_FIXTURES = ['55750249', '62754db6', '6f9e6473', '700bf4b1', 'b6e46823', 'd549052f', 'f586ef55'];

describe('bitcoin parser: Bitcoin Core JSON', () => {
  describe('block 50001, verbosity 2 (old Core: scriptPubKey.addresses)', () => {
    const result = parseBitcoinPayload([block50001()], BTC_CTX);
    const [coinbase, spend2, spend1] = txs(result);

    it('reads the block header', () => {
      expect(result.issues).to.deep.equal([]);
      expect(result.blocks).to.have.length(1);
      // Header fields of the fixture: hash, height, previousblockhash, time.
      expect(result.blocks[0].block).to.deep.equal({
        height: 50001,
        hash: '000000001c920d495e1eeef2452b6d1c6c229a919b28196c103ecffebabee141',
        parent_hash: '000000001aeae195809d120b5d66a39c83eb48792e068f8ea1fea19d84a4278a',
        time: 1270917100,
      });
      expect(txs(result).map((t) => t.tx_hash)).to.deep.equal([
        'e1882d41800d96d0fddc196cd8d3f0b45d65b030c652d97eaba79a1174e64d58',
        '7940cdde4d713e171849efc6bd89939185be270266c94e92369e3877ad89455a',
        'f84761459a00c6df3176ae5d94c99e69f25100d09548e5686bd0c354bb8cc60a',
      ]);
      for (const [i, t] of txs(result).entries()) {
        expect(t.tx_index).to.equal(i);
        expect(t).to.include({ chain_type: 'bitcoin', chain_id: 1, height: 50001, tx_time: 1270917100, tx_version: 1 });
        expect(t).to.include({ symbol: 'BTC', decimals: 8, tx_status: 'success' });
        expect(t.block_hash).to.equal(result.blocks[0].block.hash);
      }
    });

    it('treats the coinbase as a system transfer with no inputs and no fee', () => {
      // tx[0]: vin[0].coinbase "0415112a1c02cc00", one 50.0 BTC output to 1PkqKG…
      expect(coinbase).to.include({ transfer_type: 'system', sender: null, tx_fee: '0', amount: '5000000000' });
      expect(coinbase.receiver).to.equal('1PkqKGbNLDdDJGveCcNUMV9CEFH77ADrPQ');
      expect(coinbase.from_details).to.deep.equal([]);
      expect(coinbase.to_details).to.deep.equal([
        { address: '1PkqKGbNLDdDJGveCcNUMV9CEFH77ADrPQ', amount: '5000000000', vout_index: '0', is_contract: false },
      ]);
    });

    it('leaves input addresses and values unknown, keeping the outpoints', () => {
      // tx[1].vin: 76a8d70a…:0 and 0dd0394c…:0; vout[0] 100.0 BTC to 1HaHTf…
      expect(spend2.from_details).to.deep.equal([
        {
          address: null,
          amount: null,
          vin_index: '0',
          pre_vout_index: '0',
          ref_tx_hash: '76a8d70a757be5055f60be076b683897cadaad6b7bdf78c43e39b9d59cb4a6ea',
          is_contract: false,
        },
        {
          address: null,
          amount: null,
          vin_index: '1',
          pre_vout_index: '0',
          ref_tx_hash: '0dd0394c6240355f4e4b3c88028f678ed746cebee3b3e8509620733f018914c9',
          is_contract: false,
        },
      ]);
      expect(spend2.to_details).to.deep.equal([
        { address: '1HaHTfmvoUW6i6nhJf8jJs6tU4cHNmBQHQ', amount: '10000000000', vout_index: '0', is_contract: false },
      ]);
      // No `fee` member in this old block and no input values: the fee cannot be known.
      expect(spend2).to.include({ transfer_type: 'native', sender: null, tx_fee: null, amount: '10000000000' });
      expect(spend2.receiver).to.equal('1HaHTfmvoUW6i6nhJf8jJs6tU4cHNmBQHQ');
      expect(spend1.from_details.map((d) => d.ref_tx_hash)).to.deep.equal([
        '0d37522b89f991f8433b80f709ad31862a54435cd003f25732fe405e9db93216',
      ]);
      expect(spend1.amount).to.equal('5000000000');
    });
  });

  describe('block 50001 as verbosity 3 (prevouts taken from the getrawtransaction fixtures)', () => {
    const result = parseBitcoinPayload([withPrevouts(block50001(), prevouts50001())], BTC_CTX);
    const [, spend2, spend1] = txs(result);

    it('knows input addresses and values, so sender and fee', () => {
      // 76a8d70a vout 0: 50 BTC to 1DoQeK…; 0dd0394c vout 0: 50 BTC to 1PZMgk…; 0d37522b vout 0: 50 BTC to 18dxbN…
      expect(spend2.from_details.map((d) => [d.address, d.amount])).to.deep.equal([
        ['1DoQeKfU3dYhN9bxMpFFcVUnufCPDqSPae', '5000000000'],
        ['1PZMgkF2x161qvfP7dhoWSEEU3SjnQE1m9', '5000000000'],
      ]);
      // 2 × 50 in, 100 out: these early transactions paid no fee.
      expect(spend2).to.include({ sender: '1DoQeKfU3dYhN9bxMpFFcVUnufCPDqSPae', tx_fee: '0', amount: '10000000000' });
      expect(spend1.from_details[0]).to.include({ address: '18dxbN6m8zxieN8F9BchXmhbeXUdFLr8fD', amount: '5000000000' });
      expect(spend1).to.include({ sender: '18dxbN6m8zxieN8F9BchXmhbeXUdFLr8fD', tx_fee: '0' });
    });

    it('gives the same outputs and outpoints as verbosity 2', () => {
      const v2 = txs(parseBitcoinPayload([block50001()], BTC_CTX));
      expect(txs(result).map((t) => t.to_details)).to.deep.equal(v2.map((t) => t.to_details));
      const outpoints = (list: NormalizedTx[]) =>
        list.map((t) => t.from_details.map((d) => [d.vin_index, d.pre_vout_index, d.ref_tx_hash]));
      expect(outpoints(txs(result))).to.deep.equal(outpoints(v2));
    });
  });

  for (const height of [766390, 766391, 766393]) {
    describe(`block ${height}, verbosity 2 (Core v22: scriptPubKey.address, per-tx fee)`, () => {
      let raw: Json;
      let result: ParseResult;
      before(() => {
        raw = readFixtureJson(DIR + `btc-mainnet-${height}.getblock_verbosity2.json`);
        result = parseBitcoinPayload([raw], BTC_CTX);
      });

      it('parses every transaction without issues', () => {
        expect(result.issues).to.deep.equal([]);
        expect(txs(result).map((t) => t.tx_hash)).to.deep.equal(raw.tx.map((t: Json) => t.txid));
        expect(result.blocks[0].block).to.deep.equal({
          height,
          hash: raw.hash,
          parent_hash: raw.previousblockhash,
          time: raw.time,
        });
      });

      it('converts every output exactly and maps addresses (null for OP_RETURN)', () => {
        const expected = raw.tx.map((t: Json) =>
          t.vout.map((o: Json) => ({
            address: o.scriptPubKey.address ?? null,
            amount: String(sats(o.value)),
            vout_index: String(o.n),
            is_contract: false,
          })),
        );
        expect(txs(result).map((t) => t.to_details)).to.deep.equal(expected);
        const nulldata = raw.tx.flatMap((t: Json) => t.vout).filter((o: Json) => o.scriptPubKey.type === 'nulldata');
        const nullAddress = txs(result).flatMap((t) => t.to_details).filter((d) => d.address === null);
        expect(nullAddress).to.have.length(nulldata.length);
      });

      it('takes each fee from the Core `fee` field (inputs are unknown at verbosity 2)', () => {
        const [, ...spends] = txs(result);
        expect(spends.map((t) => t.tx_fee)).to.deep.equal(raw.tx.slice(1).map((t: Json) => String(sats(t.fee))));
        for (const t of spends) {
          expect(t.sender).to.equal(null);
          expect(t.from_details.every((d) => d.address === null && d.amount === null)).to.equal(true);
        }
      });

      it('balances the coinbase: outputs = 6.25 BTC subsidy + sum of fees', () => {
        const [coinbase, ...spends] = txs(result);
        const feeSum = spends.reduce((s, t) => s + BigInt(t.tx_fee as string), 0n);
        expect(coinbase.transfer_type).to.equal('system');
        expect(coinbase.amount).to.equal((BigInt(SUBSIDY_766K) + feeSum).toString());
        // Independent walk of the raw JSON: Σ coinbase vout values = subsidy + Σ fee members.
        const rawCoinbase = raw.tx[0].vout.reduce((s: number, o: Json) => s + sats(o.value), 0);
        const rawFees = raw.tx.slice(1).reduce((s: number, t: Json) => s + sats(t.fee), 0);
        expect(rawCoinbase).to.equal(SUBSIDY_766K + rawFees);
        expect(coinbase.amount).to.equal(String(rawCoinbase));
      });

      it('keeps every input outpoint', () => {
        const expected = raw.tx.slice(1).map((t: Json) =>
          t.vin.map((v: Json, i: number) => [String(i), String(v.vout), v.txid]),
        );
        const actual = txs(result)
          .slice(1)
          .map((t) => t.from_details.map((d) => [d.vin_index, d.pre_vout_index, d.ref_tx_hash]));
        expect(actual).to.deep.equal(expected);
      });

      if (height === 766391) {
        it('matches the counts recorded in SOURCES.md', () => {
          // SOURCES.md: 1034 txs, 2132 inputs (one is the coinbase's), 3728 outputs, 32 OP_RETURN, fees 0.04690384.
          const all = txs(result);
          expect(all).to.have.length(1034);
          expect(all.reduce((n, t) => n + t.from_details.length, 0)).to.equal(2131);
          expect(all.reduce((n, t) => n + t.to_details.length, 0)).to.equal(3728);
          expect(all.flatMap((t) => t.to_details).filter((d) => d.address === null)).to.have.length(32);
          expect(all.slice(1).reduce((s, t) => s + BigInt(t.tx_fee as string), 0n)).to.equal(4_690_384n);
        });
      }
    });
  }

  describe('single transactions with `prevout` (getrawtransaction verbosity 2, Core ≥ 25)', () => {
    for (const id of PREVOUT_FIXTURES) {
      it(`${id}: inputs − outputs equals the reported fee; inputs come from prevout`, () => {
        const raw: Json = readFixtureJson(DIR + `btc-mainnet.getrawtransaction_verbosity2_prevout_${id}.json`);
        const result = parseBitcoinPayload([raw], BTC_CTX);
        expect(result.issues).to.deep.equal([]);
        const [tx] = txs(result);
        expect(tx.tx_hash).to.equal(raw.txid);
        // Outputs and inputs are all known, so the parser computes the fee; it must match `fee`.
        const inSum = raw.vin.reduce((s: number, v: Json) => s + sats(v.prevout.value), 0);
        const outSum = raw.vout.reduce((s: number, o: Json) => s + sats(o.value), 0);
        expect(inSum - outSum).to.equal(sats(raw.fee));
        expect(tx.tx_fee).to.equal(String(sats(raw.fee)));
        // Without the `fee` member the parser must arrive at the same value from the amounts alone.
        delete raw.fee;
        expect(txs(parseBitcoinPayload([raw], BTC_CTX))[0].tx_fee).to.equal(String(inSum - outSum));
        expect(tx.from_details).to.deep.equal(
          raw.vin.map((v: Json, i: number) => ({
            address: v.prevout.scriptPubKey.address,
            amount: String(sats(v.prevout.value)),
            vin_index: String(i),
            pre_vout_index: String(v.vout),
            ref_tx_hash: v.txid,
            is_contract: false,
          })),
        );
        expect(tx.sender).to.equal(raw.vin[0].prevout.scriptPubKey.address);
        expect(tx.to_details.map((d) => d.address)).to.deep.equal(
          raw.vout.map((o: Json) => o.scriptPubKey.address ?? null),
        );
        // A lone transaction: block from blockhash/blocktime, no height, no position.
        expect(result.blocks[0].block).to.deep.equal({ height: null, hash: raw.blockhash, parent_hash: null, time: raw.blocktime });
        expect(tx).to.include({ tx_status: 'success', tx_index: null, height: null, tx_version: raw.version });
      });
    }

    it('700bf4b1: amount and receiver skip the OP_RETURN output', () => {
      // vin[0] prevout bc1pm9k6… 0.00005045; vout[0] 0.00000546 to bc1pw23w…; vout[1] OP_RETURN 0; fee 0.00004499
      const [tx] = txs(parseBitcoinPayload([readFixtureJson(DIR + 'btc-mainnet.getrawtransaction_verbosity2_prevout_700bf4b1.json')], BTC_CTX));
      expect(tx).to.include({
        sender: 'bc1pm9k624ve05spczap367tw033y4clkv852kg864dp20n3qnu5e55sdkfwz9',
        receiver: 'bc1pw23wxsy6c2dqrhrshwz3mw3tf0z7fsr29km6p6uspzx2vkufvapqhpf8z3',
        amount: '546',
        tx_fee: '4499',
        transfer_type: 'native',
      });
      expect(tx.to_details[1]).to.deep.equal({ address: null, amount: '0', vout_index: '1', is_contract: false });
    });

    it('excludes change back to an input address from amount and receiver (synthetic edit of 6f9e6473)', () => {
      // Real tx: 0.190582 in from bc1pcep9…; out 0.0001 to bc1p5xjl…, 0.1646 to bc1pftmu…, OP_RETURN.
      // Edit: vout[0] pays back to the input address, making it change.
      const raw: Json = readFixtureJson(DIR + 'btc-mainnet.getrawtransaction_verbosity2_prevout_6f9e6473.json');
      const own = raw.vin[0].prevout.scriptPubKey.address;
      raw.vout[0].scriptPubKey.address = own;
      const [tx] = txs(parseBitcoinPayload([raw], BTC_CTX));
      expect(tx.sender).to.equal(own);
      expect(tx.receiver).to.equal(raw.vout[1].scriptPubKey.address);
      expect(tx.amount).to.equal(String(sats(raw.vout[1].value)));
      // Everything back to the sender: a self-transfer reports all outputs and the own address.
      raw.vout[1].scriptPubKey.address = own;
      const [self] = txs(parseBitcoinPayload([raw], BTC_CTX));
      expect(self.receiver).to.equal(own);
      expect(self.amount).to.equal(String(sats(raw.vout[0].value) + sats(raw.vout[1].value)));
    });

    it('reads an old-Core verbose coinbase transaction (0d37522b) on its own', () => {
      const raw: Json = readFixtureJson(DIR + 'btc-mainnet.getrawtransaction_verbose_0d37522b.json');
      const result = parseBitcoinPayload([raw], BTC_CTX);
      expect(result.blocks[0].block).to.deep.equal({
        height: null,
        hash: '0000000009454ccca0029d7a22f4caa3d228a48d1d22fdbfa1e13cd3f1089b30',
        parent_hash: null,
        time: 1270857545,
      });
      expect(txs(result)[0]).to.include({ transfer_type: 'system', receiver: '18dxbN6m8zxieN8F9BchXmhbeXUdFLr8fD', amount: '5000000000' });
    });

    it('marks a transaction without blockhash as pending', () => {
      const raw: Json = readFixtureJson(DIR + 'btc-mainnet.getrawtransaction_verbosity2_prevout_d549052f.json');
      delete raw.blockhash;
      const result = parseBitcoinPayload([raw], BTC_CTX);
      expect(result.blocks[0].block).to.deep.equal({ height: null, hash: null, parent_hash: null, time: null });
      expect(txs(result)[0]).to.include({ tx_status: 'pending', block_hash: null, tx_time: null });
    });
  });

  describe('envelopes and unusable input', () => {
    it('unwraps a JSON-RPC envelope to the same result', () => {
      const plain = parseBitcoinPayload([block50001()], BTC_CTX);
      const wrapped = parseBitcoinPayload([{ jsonrpc: '2.0', id: 1, result: block50001() }], BTC_CTX);
      expect(wrapped).to.deep.equal(plain);
    });

    it('reports a JSON-RPC error or empty result without emitting a block', () => {
      const result = parseBitcoinPayload(
        [
          { jsonrpc: '2.0', id: 1, error: { code: -5, message: 'Block not found' } },
          { jsonrpc: '2.0', id: 2, result: null },
          block50001(),
        ],
        BTC_CTX,
      );
      expect(result.blocks).to.have.length(1);
      expect(result.blocks[0].block.height).to.equal(50001);
      expect(result.issues.map((i) => [i.block_index, i.reason])).to.deep.equal([
        [0, 'JSON-RPC error: Block not found'],
        [1, 'JSON-RPC result is empty'],
      ]);
    });

    it('reports each txid-only transaction of a verbosity-1 block', () => {
      const raw = block50001();
      raw.tx = raw.tx.map((t: Json) => t.txid);
      const result = parseBitcoinPayload([raw], BTC_CTX);
      expect(result.blocks[0].transactions).to.deep.equal([]);
      expect(result.issues.map((i) => [i.tx_index, i.tx_hash])).to.deep.equal(raw.tx.map((id: string, j: number) => [j, id]));
    });

    it('drops only the broken transaction of a block', () => {
      const raw = block50001();
      raw.tx[1].vout = 'garbage';
      const result = parseBitcoinPayload([raw], BTC_CTX);
      expect(txs(result).map((t) => t.tx_index)).to.deep.equal([0, 2]);
      expect(result.issues).to.deep.equal([
        { block_index: 0, tx_hash: raw.tx[1].txid, tx_index: 1, reason: 'vout is not an array' },
      ]);
    });

    it('reports items that are neither blocks nor transactions, and a non-array payload', () => {
      const result = parseBitcoinPayload([null, 42, 'x', [], { hash: 'abc' }], BTC_CTX);
      expect(result.blocks).to.deep.equal([]);
      expect(result.issues.map((i) => i.block_index)).to.deep.equal([0, 1, 2, 3, 4]);
      const notArray = parseBitcoinPayload(null as unknown as unknown[], BTC_CTX);
      expect(notArray.blocks).to.deep.equal([]);
      expect(notArray.issues).to.have.length(1);
    });

    it('is deterministic', () => {
      const a = parseBitcoinPayload([readFixtureJson(DIR + 'btc-mainnet-766393.getblock_verbosity2.json')], BTC_CTX);
      const b = parseBitcoinPayload([readFixtureJson(DIR + 'btc-mainnet-766393.getblock_verbosity2.json')], BTC_CTX);
      expect(JSON.stringify(a)).to.equal(JSON.stringify(b));
    });
  });
});
