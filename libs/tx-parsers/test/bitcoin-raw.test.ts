import { networkByName } from '@chainpipe/chains';
import { bitcoinRawBlock as rawBlockOf, readFixtureJson } from '@chainpipe/testing';
import { expect } from 'chai';
import { parseBitcoinPayload } from '../src/bitcoin';
import { outputKey, resolveInputs, unresolvedPrevTxids, type KnownOutput } from '../src/bitcoin/resolve';
import type { ChainContext, NormalizedTx } from '../src/types';

// Raw Bitcoin data (getblock verbosity 0, non-verbose getrawtransaction). The fixtures hold no raw
// block: each one used here is DERIVED from a complete, verified verbosity-2 block (SOURCES.md)
// by serializing its header fields (version, previousblockhash, merkleroot, time, bits, nonce as
// the 80-byte header) followed by the transaction count and every transaction's own `hex`, which
// is exactly what `getblock <hash> 0` returns; the test first checks that the derived header
// hashes to the fixture's block hash. The expectations are Core's own decoding in the same
// fixture (scriptPubKey.address, value, vin txid/vout), never the parser's output. The
// serialization is libs/testing's bitcoinRawBlock, written without the library the parser uses.

const n = networkByName('bitcoin-mainnet')!;
const BTC: ChainContext = { chainType: n.chainType, chainId: n.chainId, family: n.family, nativeSymbol: n.nativeSymbol, nativeDecimals: n.nativeDecimals };

/**
 * The address Core names for an output: `address` (Core ≥ 22), else the one entry of `addresses`
 * (older Core, which also names a P2PK output by its key's P2PKH address).
 */
const coreAddress = (spk: any): string | null => spk.address ?? (spk.addresses?.length === 1 ? spk.addresses[0] : null);

/** Satoshi of a Core BTC number, through its 8-decimal text. */
const sats = (btc: number): string => BigInt(btc.toFixed(8).replace('.', '')).toString();

function expectMatchesCore(record: NormalizedTx, coreTx: any): void {
  expect(record.tx_hash).to.equal(coreTx.txid);
  expect(record.tx_version).to.equal(coreTx.version);
  expect(record.to_details.map((d) => [d.address, d.amount, d.vout_index])).to.deep.equal(
    coreTx.vout.map((o: any) => [coreAddress(o.scriptPubKey), sats(o.value), String(o.n)]),
  );
  const coinbase = 'coinbase' in coreTx.vin[0];
  if (coinbase) {
    expect(record.from_details).to.deep.equal([]);
    expect(record.transfer_type).to.equal('system');
    return;
  }
  expect(record.from_details.map((d) => [d.ref_tx_hash, d.pre_vout_index, d.address, d.amount])).to.deep.equal(
    coreTx.vin.map((i: any) => [i.txid, String(i.vout), null, null]),
  );
  // Raw data names no prevout: input values unknown, so the fee is not guessed.
  expect(record.tx_fee).to.equal(null);
  expect(record.sender).to.equal(null);
}

describe('parseBitcoinPayload — raw blocks (getblock verbosity 0, derived) and raw transactions', () => {
  for (const height of [766390, 766393]) {
    it(`decodes block ${height} like Core's verbosity 2 says: every output address and value, every input reference`, () => {
      const core = readFixtureJson(`bitcoin/btc-mainnet-${height}.getblock_verbosity2.json`);
      const res = parseBitcoinPayload([rawBlockOf(core)], BTC);
      expect(res.issues).to.deep.equal([]);
      expect(res.blocks).to.have.length(1);
      // height from the coinbase's BIP34 push, hash/parent/time from the header
      expect(res.blocks[0].block).to.deep.equal({ height, hash: core.hash, parent_hash: core.previousblockhash, time: core.time });
      const records = res.blocks[0].transactions;
      expect(records).to.have.length(core.tx.length);
      records.forEach((r, i) => {
        expectMatchesCore(r, core.tx[i]);
        expect(r).to.include({ height, block_hash: core.hash, tx_time: core.time, tx_index: i, tx_status: 'success' });
      });
    });
  }

  it('covers every address kind of 766390: P2PKH, P2SH, P2WPKH, P2WSH, P2TR, and OP_RETURN without address', () => {
    const core = readFixtureJson('bitcoin/btc-mainnet-766390.getblock_verbosity2.json');
    const types = new Map<string, number>();
    for (const t of core.tx) for (const o of t.vout) types.set(o.scriptPubKey.type, (types.get(o.scriptPubKey.type) ?? 0) + 1);
    // SOURCES.md: 10 P2PKH, 7 P2SH, 5 P2WPKH, 2 P2TR, 1 P2WSH, 1 OP_RETURN (+ the coinbase's outputs)
    for (const kind of ['pubkeyhash', 'scripthash', 'witness_v0_keyhash', 'witness_v0_scripthash', 'witness_v1_taproot', 'nulldata']) {
      expect(types.get(kind), kind).to.be.greaterThan(0);
    }
    const records = parseBitcoinPayload([rawBlockOf(core)], BTC).blocks[0].transactions;
    const byType = new Map<string, Array<[string | null, string | null]>>();
    core.tx.forEach((t: any, i: number) =>
      t.vout.forEach((o: any, k: number) => {
        const list = byType.get(o.scriptPubKey.type) ?? [];
        list.push([o.scriptPubKey.address ?? null, records[i].to_details[k].address]);
        byType.set(o.scriptPubKey.type, list);
      }),
    );
    for (const [kind, pairs] of byType) for (const [coreAddress, decoded] of pairs) expect(decoded, kind).to.equal(coreAddress);
  });

  it('takes a lone raw transaction (non-verbose getrawtransaction) as pending, outputs as Core decodes them', () => {
    // btc-mainnet.getrawtransaction_verbose_0d37522b.json: its `hex` is the non-verbose answer.
    const verbose = readFixtureJson('bitcoin/btc-mainnet.getrawtransaction_verbose_0d37522b.json');
    const res = parseBitcoinPayload([{ jsonrpc: '2.0', id: 1, result: verbose.hex }], BTC);
    expect(res.issues).to.deep.equal([]);
    const [record] = res.blocks[0].transactions;
    expectMatchesCore(record, verbose);
    expect(record).to.include({ tx_status: 'pending', height: null, block_hash: null });
  });

  it('takes the height of a version-1 block (before BIP34) from the batch range; P2PK named by its key', () => {
    // block 50001 (2010), version 1: its coinbase script starts with the bits, not the height.
    // Its coinbase pays P2PK (type pubkey), which this old Core names 1PkqKGbN… (P2PKH of the key).
    const core = readFixtureJson('bitcoin/btc-mainnet-50001.getblock_verbosity2.json');
    const res = parseBitcoinPayload([rawBlockOf(core)], { ...BTC, batchStartRange: 50001 });
    expect(res.issues).to.deep.equal([]);
    expect(res.blocks[0].block).to.deep.equal({ height: 50001, hash: core.hash, parent_hash: core.previousblockhash, time: core.time });
    res.blocks[0].transactions.forEach((r, i) => expectMatchesCore(r, core.tx[i]));
    expect(parseBitcoinPayload([rawBlockOf(core)], BTC).blocks[0].block.height).to.equal(null);
  });

  it('reports strings that are not raw Bitcoin data and keeps going', () => {
    const core = readFixtureJson('bitcoin/btc-mainnet-766393.getblock_verbosity2.json');
    const res = parseBitcoinPayload(['not hex', 'abcd'.repeat(20), rawBlockOf(core)], BTC);
    expect(res.blocks).to.have.length(1);
    expect(res.issues.map((i) => i.block_index)).to.deep.equal([0, 1]);
  });

  describe('inputs resolved from stored outputs', () => {
    // Block 50001 (raw, derived as above) spends outputs of 76a8d70a…:0 and 0dd0394c…:0 (tx
    // 7940cdde…) and 0d37522b…:0 (tx f8476145…). The three previous transactions are fixtures
    // (verbose getrawtransaction); their parsed outputs stand for what the store holds. Each pays
    // 50 BTC (5,000,000,000 sat) to a P2PK key old Core names 1DoQeKfU…, 1PZMgkF2…, 18dxbN6m….
    const core = readFixtureJson('bitcoin/btc-mainnet-50001.getblock_verbosity2.json');
    const raw = parseBitcoinPayload([rawBlockOf(core)], { ...BTC, batchStartRange: 50001 }).blocks[0].transactions;
    const storedOf = (ids: string[]): Map<string, KnownOutput> => {
      const out = new Map<string, KnownOutput>();
      for (const id of ids) {
        const rec = parseBitcoinPayload([readFixtureJson(`bitcoin/btc-mainnet.getrawtransaction_verbose_${id}.json`)], BTC).blocks[0].transactions[0];
        for (const d of rec.to_details) out.set(outputKey(rec.tx_hash, d.vout_index!), { address: d.address, amount: d.amount });
      }
      return out;
    };

    it('names the previous transactions it needs', () => {
      expect(unresolvedPrevTxids(raw)).to.have.members(core.tx.slice(1).flatMap((t: any) => t.vin.map((i: any) => i.txid)));
    });

    it('fills input addresses and values, then fee = inputs − outputs and the sender', () => {
      const [coinbase, t1, t2] = resolveInputs(raw, storedOf(['76a8d70a', '0dd0394c', '0d37522b']));
      expect(coinbase).to.equal(raw[0]); // nothing to resolve: the same record
      expect(t1.from_details.map((d) => [d.address, d.amount])).to.deep.equal([
        ['1DoQeKfU3dYhN9bxMpFFcVUnufCPDqSPae', '5000000000'],
        ['1PZMgkF2x161qvfP7dhoWSEEU3SjnQE1m9', '5000000000'],
      ]);
      // 2 × 50 BTC in, 100 BTC out to 1HaHTfmv…: fee 0, all of it sent to another address
      expect(t1).to.include({ tx_fee: '0', sender: '1DoQeKfU3dYhN9bxMpFFcVUnufCPDqSPae', receiver: '1HaHTfmvoUW6i6nhJf8jJs6tU4cHNmBQHQ', amount: '10000000000' });
      expect(t2).to.include({ tx_fee: '0', sender: '18dxbN6m8zxieN8F9BchXmhbeXUdFLr8fD', amount: '5000000000' });
      expect(t1).to.include({ height: 50001, block_hash: core.hash, tx_index: 1, tx_status: 'success' });
    });

    it('leaves the fee unknown while one input is not stored', () => {
      const [, t1, t2] = resolveInputs(raw, storedOf(['76a8d70a']));
      expect(t1.from_details.map((d) => d.amount)).to.deep.equal(['5000000000', null]);
      expect(t1.tx_fee).to.equal(null);
      expect(t2.tx_fee).to.equal(null);
    });

    it('resolves a spend of an earlier transaction of the same block', () => {
      // Derived records: t2 made to spend t1's output 0 instead of 0d37522b…:0.
      const spendInBlock = raw.map((t, i) => (i === 2 ? { ...t, from_details: [{ ...t.from_details[0], ref_tx_hash: raw[1].tx_hash, pre_vout_index: '0' }] } : t));
      const t2 = resolveInputs(spendInBlock, new Map())[2];
      expect(t2.from_details[0]).to.include({ address: '1HaHTfmvoUW6i6nhJf8jJs6tU4cHNmBQHQ', amount: '10000000000' });
      // 100 BTC in, 50 BTC out: fee 50 BTC
      expect(t2.tx_fee).to.equal('5000000000');
    });
  });
});
