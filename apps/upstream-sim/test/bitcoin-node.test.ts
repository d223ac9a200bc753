import { expect } from 'chai';
import { bitcoinRawBlock, readFixtureJson } from '@chainpipe/testing';
import { call, fixtureDocs, nodeOf, result } from './helpers';

describe('Bitcoin Core node from fixtures', () => {
  const btc = nodeOf('bitcoin-mainnet').rpc;
  const block = readFixtureJson('bitcoin/btc-mainnet-766390.getblock_verbosity2.json');
  const blocks = fixtureDocs()
    .filter((d) => d.path.startsWith('bitcoin/') && d.path.includes('getblock_'))
    .map((d) => d.json as any);
  const tip = blocks.reduce((a, b) => (b.height > a.height ? b : a));

  it('reports the highest fixture block as the tip', () => {
    expect(blocks.length).to.be.greaterThan(2);
    expect(result(btc, 'getblockcount')).to.equal(tip.height);
    expect(result(btc, 'getbestblockhash')).to.equal(tip.hash);
    const info = result(btc, 'getblockchaininfo');
    expect(info).to.include({ chain: 'main', blocks: tip.height, headers: tip.height, bestblockhash: tip.hash, chainwork: tip.chainwork, initialblockdownload: false });
  });

  it('maps heights to hashes, with Core errors outside the range', () => {
    expect(result(btc, 'getblockhash', [block.height])).to.equal(block.hash);
    expect(result(btc, 'getblockhash', { height: block.height })).to.equal(block.hash);
    expect(call(btc, 'getblockhash', [tip.height + 1]).error).to.deep.equal({ code: -8, message: 'Block height out of range' });
    expect(call(btc, 'getblockhash', [-1]).error?.code).to.equal(-8);
    expect(call(btc, 'getblockhash', ['766390']).error?.code).to.equal(-3);
    // A height inside the range that no fixture holds.
    const heights = blocks.map((b) => b.height);
    let gap = block.height + 1;
    while (heights.includes(gap)) gap += 1;
    expect(gap).to.be.lessThan(tip.height);
    expect(call(btc, 'getblockhash', [gap]).error?.code).to.equal(-5);
  });

  it('serves getblock at verbosity 2 exactly and at verbosity 1 with txids', () => {
    expect(result(btc, 'getblock', [block.hash, 2])).to.deep.equal(block);
    const v1 = result(btc, 'getblock', [block.hash]);
    expect(v1.tx).to.deep.equal(block.tx.map((t: any) => t.txid));
    expect({ ...v1, tx: block.tx }).to.deep.equal(block);
    expect(result(btc, 'getblock', { blockhash: block.hash, verbosity: true }).tx).to.deep.equal(v1.tx);
    // Verbosity 0: the serialized block, byte for byte what a hand serialization of the fixture's
    // header fields and transaction hex gives (libs/testing checks it hashes to the block hash).
    expect(result(btc, 'getblock', [block.hash, 0])).to.equal(bitcoinRawBlock(block));
    expect(result(btc, 'getblock', [block.hash, false])).to.equal(bitcoinRawBlock(block));
    expect(call(btc, 'getblock', ['00' + block.hash.slice(2, 62) + 'ff']).error).to.deep.equal({ code: -5, message: 'Block not found' });
    expect(call(btc, 'getblock', ['abc']).error).to.deep.equal({ code: -8, message: "blockhash must be of length 64 (not 3, for 'abc')" });
    expect(call(btc, 'getblock', ['z'.repeat(64)]).error?.code).to.equal(-8);
    expect(call(btc, 'getblock', []).error?.code).to.equal(-1);
    expect(call(btc, 'getblock', { nope: 1 }).error?.code).to.equal(-8);
  });

  it('serves getrawtransaction for any transaction of a fixture block, at every verbosity', () => {
    const tx = block.tx.find((t: any) => t.fee !== undefined);
    expect(result(btc, 'getrawtransaction', [tx.txid])).to.equal(tx.hex);
    const { fee: _fee, ...noFee } = tx;
    expect(result(btc, 'getrawtransaction', [tx.txid, true])).to.deep.equal({ ...noFee, blockhash: block.hash, confirmations: block.confirmations, time: block.time, blocktime: block.time });
    expect(result(btc, 'getrawtransaction', [tx.txid, 2])).to.deep.equal({ ...tx, blockhash: block.hash, confirmations: block.confirmations, time: block.time, blocktime: block.time });
    expect(result(btc, 'getrawtransaction', [tx.txid, 1, block.hash]).txid).to.equal(tx.txid);
    expect(call(btc, 'getrawtransaction', [tx.txid, 1, tip.hash === block.hash ? blocks[0].hash : tip.hash]).error?.code).to.equal(-5);
  });

  it('serves the getrawtransaction fixtures: verbosity 2 exactly, verbose without fee and prevouts', () => {
    const v2 = readFixtureJson('bitcoin/btc-mainnet.getrawtransaction_verbosity2_prevout_700bf4b1.json');
    expect(v2.vin.some((i: any) => i.prevout)).to.equal(true);
    expect(result(btc, 'getrawtransaction', [v2.txid, 2])).to.deep.equal(v2);
    const v1 = result(btc, 'getrawtransaction', [v2.txid, true]);
    expect(v1).to.not.have.property('fee');
    expect(v1.vin.map((i: any) => i.prevout)).to.deep.equal(v2.vin.map(() => undefined));
    expect(v1.vout).to.deep.equal(v2.vout);
    const verbose = readFixtureJson('bitcoin/btc-mainnet.getrawtransaction_verbose_0d37522b.json');
    expect(result(btc, 'getrawtransaction', [verbose.txid, true])).to.deep.equal(verbose);
  });

  it('answers Core errors for unknown and malformed txids', () => {
    expect(call(btc, 'getrawtransaction', ['ab'.repeat(32)]).error).to.deep.equal({ code: -5, message: 'No such mempool or blockchain transaction. Use gettransaction for wallet transactions.' });
    expect(call(btc, 'getrawtransaction', ['ab']).error?.code).to.equal(-8);
    expect(call(btc, 'getrawtransaction', [123]).error?.code).to.equal(-3);
    expect(call(btc, 'getrawtransaction', [block.tx[0].txid, 'yes']).error?.code).to.equal(-3);
  });
});
