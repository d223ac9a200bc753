import { expect } from 'chai';
import { NETWORKS } from '@chainpipe/chains';
import { readFixtureJson } from '@chainpipe/testing';
import { buildEvmChain, classifyEvmFixture, evmNode, type EvmDoc } from '../src/chain-nodes/evm-node';
import { call, fixtureDocs, nodeOf, result } from './helpers';

const hex = (n: number) => `0x${n.toString(16)}`;
const unwrap = (v: any) => (v && typeof v === 'object' && 'jsonrpc' in v ? v.result : v);

describe('EVM chain node from fixtures', () => {
  const eth = nodeOf('ethereum-mainnet').rpc;
  const block = readFixtureJson('evm/eth-mainnet-17053184.block_fulltx.json');
  const receipts: any[] = readFixtureJson('evm/eth-mainnet-17053184.receipts.json');
  const number = parseInt(block.number, 16);

  it('reports the highest block of the block fixtures as eth_blockNumber and serves it as latest', () => {
    const heights = fixtureDocs()
      .filter((d) => /^evm\/eth-mainnet-\d+\.(block_fulltx|eth_getBlockBy\w+_full)\.json$/.test(d.path))
      .map((d) => parseInt(unwrap(d.json).number, 16));
    expect(heights.length).to.be.greaterThan(1);
    expect(result(eth, 'eth_blockNumber')).to.equal(hex(Math.max(...heights)));
    expect(result(eth, 'eth_getBlockByNumber', ['latest', true])).to.deep.equal(readFixtureJson(`evm/eth-mainnet-${Math.max(...heights)}.block_fulltx.json`));
  });

  it('returns a transaction of a block exactly as the fixture has it, whatever the case of the hash', () => {
    const tx = block.transactions[7];
    expect(result(eth, 'eth_getTransactionByHash', [tx.hash])).to.deep.equal(tx);
    expect(result(eth, 'eth_getTransactionByHash', [tx.hash.toUpperCase().replace('0X', '0x')])).to.deep.equal(tx);
    expect(result(eth, 'eth_getTransactionByHash', [`0x${'ab'.repeat(32)}`])).to.equal(null);
  });

  it('returns receipts by transaction hash, and the complete receipt list of a block', () => {
    const failed = receipts.find((r) => r.status === '0x0');
    expect(failed, 'the fixture has failed transactions').to.not.equal(undefined);
    expect(result(eth, 'eth_getTransactionReceipt', [failed.transactionHash])).to.deep.equal(failed);
    expect(result(eth, 'eth_getBlockReceipts', [block.number])).to.deep.equal(receipts);
    expect(result(eth, 'eth_getBlockReceipts', [block.hash])).to.deep.equal(receipts);
    expect(result(eth, 'eth_getBlockReceipts', [{ blockHash: block.hash }])).to.deep.equal(receipts);
    // A block that is there without its receipt list: an explicit gap, not a partial list.
    const lone = unwrap(readFixtureJson('evm/eth-mainnet-1755635.eth_getBlockByNumber_full.json'));
    expect(call(eth, 'eth_getBlockReceipts', [lone.number]).error?.code).to.equal(-32000);
    expect(result(eth, 'eth_getBlockReceipts', [hex(number + 1)])).to.equal(null);
  });

  it('serves blocks by number and hash, with transaction hashes only when fullTx is false', () => {
    expect(result(eth, 'eth_getBlockByNumber', [block.number, true])).to.deep.equal(block);
    expect(result(eth, 'eth_getBlockByHash', [block.hash, true])).to.deep.equal(block);
    const light = result(eth, 'eth_getBlockByHash', [block.hash, false]);
    expect(light.transactions).to.deep.equal(block.transactions.map((t: any) => t.hash));
    expect({ ...light, transactions: block.transactions }).to.deep.equal(block);
    expect(result(eth, 'eth_getBlockByNumber', [hex(number - 1), false])).to.equal(null);
    expect(result(eth, 'eth_getBlockByHash', [`0x${'00'.repeat(32)}`, false])).to.equal(null);
  });

  it('serves callTracer traces as {txHash, result} in block order, and Parity traces as stored', () => {
    const frames: any[] = readFixtureJson('evm/eth-mainnet-17053184.debug_trace_callTracer.json');
    const traces = result(eth, 'debug_traceBlockByNumber', [block.number, { tracer: 'callTracer' }]);
    expect(traces).to.deep.equal(frames.map((frame, i) => ({ txHash: block.transactions[i].hash, result: frame })));
    expect(result(eth, 'debug_traceBlockByHash', [block.hash, { tracer: 'callTracer' }])).to.deep.equal(traces);
    const oldGeth = readFixtureJson('evm/eth-mainnet-1000000.debug_traceBlockByNumber_callTracer.json');
    expect(result(eth, 'debug_traceBlockByNumber', [hex(1_000_000), { tracer: 'callTracer' }])).to.deep.equal(oldGeth.result);
    expect(result(eth, 'trace_block', [hex(1_000_000)])).to.deep.equal(readFixtureJson('evm/eth-mainnet-1000000.trace_block.json').result);
    expect(result(eth, 'trace_block', [hex(1_000_001)])).to.equal(null);
    expect(call(eth, 'debug_traceBlockByNumber', [block.number]).error?.code).to.equal(-32602);
    expect(call(eth, 'debug_traceBlockByNumber', [hex(1_000_001), { tracer: 'callTracer' }]).error).to.deep.equal({ code: -32000, message: 'block #1000001 not found' });
  });

  it('rejects malformed arguments with -32602 and geth-style messages', () => {
    const cases: [string, unknown, RegExp][] = [
      ['eth_getBlockByNumber', ['0x01', false], /leading zero digits/],
      ['eth_getBlockByNumber', ['17053184', false], /without 0x prefix/],
      ['eth_getBlockByNumber', [block.number], /missing value for required argument 1/],
      ['eth_getBlockByNumber', [block.number, 'yes'], /cannot unmarshal string into Go value of type bool/],
      ['eth_getBlockByNumber', { number: block.number }, /non-array args/],
      ['eth_getTransactionByHash', ['0x1234'], /has length 4, want 64/],
      ['eth_getTransactionByHash', [], /missing value for required argument 0/],
      ['eth_getBalance', ['0x12', 'latest'], /want 40 for common.Address/],
      ['eth_getBlockByNumber', [`0x${'f'.repeat(17)}`, false], /> 64 bits/],
    ];
    for (const [method, params, message] of cases) {
      const out = call(eth, method, params);
      expect(out.error?.code, `${method} ${JSON.stringify(params)}`).to.equal(-32602);
      expect(out.error?.message).to.match(message);
    }
  });

  it('holds nothing at an address nobody paid (on every network, in any case of the address), and no state past the head', () => {
    const a = '0x' + '11'.repeat(20);
    expect(result(eth, 'eth_getBalance', [a, 'latest'])).to.equal('0x0');
    expect(result(eth, 'eth_getBalance', [a.toUpperCase().replace('0X', '0x'), block.number])).to.equal('0x0');
    expect(result(nodeOf('base-mainnet').rpc, 'eth_getBalance', [a, 'latest'])).to.equal('0x0');
    expect(result(nodeOf('tron-mainnet').rpc, 'eth_getBalance', [a, 'latest']), "Tron's eth view").to.equal('0x0');
    expect(call(eth, 'eth_getBalance', [a, hex(number + 1)]).error?.code).to.equal(-32000);
  });

  it('answers eth_chainId / net_version with each network id, and serves base-mainnet from the Base Goerli block', () => {
    for (const n of NETWORKS.filter((x) => x.family === 'evm')) {
      const rpc = nodeOf(n.network).rpc;
      expect(result(rpc, 'eth_chainId'), n.network).to.equal(hex(n.chainId));
      expect(result(rpc, 'net_version')).to.equal(String(n.chainId));
    }
    const goerli = readFixtureJson('evm/base-goerli-1041847.block_fulltx.json');
    const base = nodeOf('base-mainnet').rpc;
    expect(result(base, 'eth_blockNumber')).to.equal(goerli.number);
    expect(result(base, 'eth_getBlockByNumber', ['latest', true])).to.deep.equal(goerli);
    const bsc = unwrap(readFixtureJson('evm/bsc-testnet-11832497.eth_getBlockByHash_full.json'));
    expect(result(nodeOf('bsc-testnet').rpc, 'eth_getBlockByHash', [bsc.hash, true])).to.deep.equal(bsc);
  });

  it('serves transaction-only networks (OP, Polygon) with the highest block their fixtures name as head', () => {
    const tx = readFixtureJson('evm/op-mainnet-127446283.eth_getTransactionByHash_l1info-deposit_0xbc9329af.json');
    const receipt = readFixtureJson('evm/op-mainnet-114290569.eth_getTransactionReceipt_l1info-deposit_0xb7c74afd.json');
    const op = nodeOf('optimism-mainnet').rpc;
    expect(result(op, 'eth_getTransactionByHash', [tx.hash])).to.deep.equal(tx);
    expect(result(op, 'eth_getTransactionReceipt', [receipt.transactionHash])).to.deep.equal(receipt);
    expect(result(op, 'eth_blockNumber')).to.equal(hex(Math.max(parseInt(tx.blockNumber, 16), parseInt(receipt.blockNumber, 16))));
    const bor = readFixtureJson('evm/polygon-pos-34155965.bor_state-sync_receipt_0xd9273904.json');
    expect(result(nodeOf('polygon-mainnet').rpc, 'eth_getTransactionReceipt', [bor.transactionHash])).to.deep.equal(bor);
  });

  it('answers from an empty chain on networks without fixtures', () => {
    const sepolia = nodeOf('ethereum-sepolia').rpc;
    expect(result(sepolia, 'eth_blockNumber')).to.equal('0x0');
    expect(result(sepolia, 'eth_getBlockByNumber', ['latest', false])).to.equal(null);
    expect(result(sepolia, 'eth_getTransactionByHash', [block.transactions[0].hash])).to.equal(null);
  });

  it('serves Tron through its eth view: chain id 0x2b6653dc, a hash-only block stays hash-only, no trace namespace', () => {
    const tron = nodeOf('tron-mainnet').rpc;
    const tronBlock = readFixtureJson('tron/tron-mainnet-39507235.jsonrpc_eth_getBlockByNumber_hashes_TRUNCATED-docs-example.json').result;
    const tronTx = readFixtureJson('tron/tron-mainnet-39507235.jsonrpc_eth_getTransactionByHash_usdt_0x9ff75c01-docs-example.json').result;
    const tronReceipt = readFixtureJson('tron/tron-mainnet-39507235.jsonrpc_eth_getTransactionReceipt_usdt_0x9ff75c01-docs-example.json').result;
    expect(result(tron, 'eth_chainId')).to.equal('0x2b6653dc');
    expect(result(tron, 'eth_blockNumber')).to.equal(tronBlock.number);
    expect(result(tron, 'eth_getBlockByNumber', [tronBlock.number, false])).to.deep.equal(tronBlock);
    // Only one of its transactions is known as an object: no mix of objects and hashes.
    expect(result(tron, 'eth_getBlockByNumber', [tronBlock.number, true])).to.deep.equal(tronBlock);
    expect(result(tron, 'eth_getTransactionByHash', [tronTx.hash])).to.deep.equal(tronTx);
    expect(result(tron, 'eth_getTransactionReceipt', [tronTx.hash])).to.deep.equal(tronReceipt);
    expect(call(tron, 'debug_traceBlockByNumber', [tronBlock.number, { tracer: 'callTracer' }]).error?.code).to.equal(-32601);
  });

  it('fills a hash-only block with transaction objects when every one is known', () => {
    const tx = { hash: '0x' + 'aa'.repeat(32), from: '0x' + '01'.repeat(20), nonce: '0x0', input: '0x', blockNumber: '0x5' };
    const docs: EvmDoc[] = [
      { kind: 'block', value: { number: '0x5', hash: '0x' + 'bb'.repeat(32), parentHash: '0x' + '00'.repeat(32), transactions: [tx.hash] }, fileNumber: 5, source: 'synthetic' },
      { kind: 'tx', value: tx, fileNumber: 5, source: 'synthetic' },
    ];
    const node = evmNode(buildEvmChain(docs).chain, { network: 'x', chainId: 1, traces: true, clientVersion: 't' });
    expect(result(node, 'eth_getBlockByNumber', ['0x5', true]).transactions).to.deep.equal([tx]);
  });

  it('classifies fixture files by the method in their name and skips the others', () => {
    const kinds = fixtureDocs()
      .filter((d) => d.path.startsWith('evm/'))
      .map((d) => {
        const c = classifyEvmFixture(d);
        return 'kind' in c ? c.kind : 'skipped';
      });
    expect(kinds).to.not.include('skipped');
    expect(classifyEvmFixture({ path: 'evm/eth-mainnet-1.something_else.json', json: {} })).to.have.property('reason');
  });
});
