import { createHmac } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { expect } from 'chai';
import { networkByName } from '@chainpipe/chains';
import { CHAIN_FIXTURES_DIR, readFixtureJson } from '@chainpipe/testing';
import { parseChainPayload } from '@chainpipe/tx-parsers';
import { DEFAULT_REPLAY_SET, batchFromDefault, batchFromFile, guessDataset } from '../src/replay/fixture-batches';
import { planReplay } from '../src/replay/replay';
import { wrapStreamBatch, type StreamBatch } from '../src/replay/stream-batch';

const VOTE = 'Vote111111111111111111111111111111111111111';
const COMPUTE_BUDGET = 'ComputeBudget111111111111111111111111111111';
const isVoteOnly = (tx: any) => {
  const outer = tx.transaction.message.instructions.filter((ix: any) => ix.programId !== COMPUTE_BUDGET);
  return outer.length > 0 && outer.every((ix: any) => ix.programId === VOTE);
};
const lower = (headers: Record<string, string>) => Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));

describe('streamer wrapping of fixture blocks', () => {
  const block = readFixtureJson('evm/eth-mainnet-17053184.block_fulltx.json');
  const receipts = readFixtureJson('evm/eth-mainnet-17053184.receipts.json');
  const n = parseInt(block.number, 16);
  const batch: StreamBatch = { network: 'ethereum-mainnet', dataset: 'block_with_receipts', items: [{ block, receipts }], startRange: n, endRange: n, label: 'eth' };

  it('posts {data, metadata} with the batch range, data size and dataset, and the same metadata as headers', () => {
    const d = wrapStreamBatch(batch, { secret: 's3cret', streamId: 'stream-1' });
    const body = JSON.parse(d.body.toString('utf8'));
    expect(body.data).to.deep.equal([{ block, receipts }]);
    const dataSize = Buffer.byteLength(JSON.stringify([{ block, receipts }]));
    expect(body.metadata).to.include({ batch_start_range: n, batch_end_range: n, data_size_bytes: dataSize, dataset: 'block_with_receipts', network: 'ethereum-mainnet', stream_id: 'stream-1', end_range: -1 });
    expect(body.metadata.blocks_reorged).to.equal(null);
    expect(body.metadata.reorgs).to.equal(null);
    const h = lower(d.headers);
    expect(h).to.include({
      'content-secret-x': 's3cret',
      'cl-stream-network': 'ethereum-mainnet',
      'stream-network': 'ethereum-mainnet',
      'stream-dataset': 'block_with_receipts',
      'batch-start-range': String(n),
      'batch-end-range': String(n),
      'batch-data-size-bytes': String(dataSize),
      'batch-blocks-reorged': '[]',
      'stream-id': 'stream-1',
      'content-type': 'application/json',
    });
    expect(h).to.not.have.property('content-encoding');
    expect(d.json).to.equal(d.body.toString('utf8'));
  });

  it('gzips the body on request and signs the uncompressed payload like QuickNode', () => {
    const d = wrapStreamBatch(batch, { secret: 's', streamId: 'x', gzip: true, signing: { token: 'qn-token', nonce: 'abc123', timestampSec: 1_700_000_000 } });
    expect(gunzipSync(d.body).toString('utf8')).to.equal(d.json);
    expect(d.body.length).to.be.lessThan(Buffer.byteLength(d.json));
    const h = lower(d.headers);
    expect(h['content-encoding']).to.equal('gzip');
    expect(h['x-qn-nonce']).to.equal('abc123');
    expect(h['x-qn-timestamp']).to.equal('1700000000');
    expect(h['x-qn-signature']).to.equal(createHmac('sha256', 'qn-token').update('abc123' + '1700000000' + d.json).digest('hex'));
  });

  it('builds the default set from the fixtures: one block per post, numbered as each chain numbers blocks', () => {
    const read = (rel: string) => readFixtureJson(rel);
    const batches = DEFAULT_REPLAY_SET.map((e) => batchFromDefault(e, read));
    expect(batches.map((b) => b.network)).to.include.members(['ethereum-mainnet', 'base-mainnet', 'solana-devnet', 'tron-mainnet', 'bitcoin-mainnet']);
    const eth = batches.find((b) => b.label === 'eth-mainnet-17053184')!;
    expect(eth).to.include({ dataset: 'block_with_receipts', startRange: n, endRange: n });
    expect(eth.items).to.deep.equal([{ block, receipts }]);
    const sol = readFixtureJson('solana/sol-devnet-blockheight139015678.getBlock_jsonParsed_full.json').result;
    expect(batches.find((b) => b.network === 'solana-devnet')).to.deep.include({ startRange: sol.parentSlot + 1, items: [sol] });
    const tron = readFixtureJson('tron/tron-mainnet-61132092.wallet_getblockbynum_full_hex.json');
    expect(batches.find((b) => b.network === 'tron-mainnet')).to.deep.include({ startRange: tron.block_header.raw_data.number, items: [tron] });
    const btc = readFixtureJson('bitcoin/btc-mainnet-766390.getblock_verbosity2.json');
    expect(batches.find((b) => b.network === 'bitcoin-mainnet')).to.deep.include({ startRange: btc.height, items: [btc] });
    // Oldest first per network: a stream moves forward.
    const ethRanges = batches.filter((b) => b.network === 'ethereum-mainnet').map((b) => b.startRange);
    expect(ethRanges).to.deep.equal([...ethRanges].sort((a, b) => a - b));
  });

  it('wraps every default batch into a delivery the chain parsers read completely', () => {
    for (const b of planReplay({ all: true, fixturesDir: CHAIN_FIXTURES_DIR })) {
      const d = wrapStreamBatch(b, { secret: 's', streamId: 'x' });
      const network = networkByName(b.network)!;
      const parsed = parseChainPayload(d.body, network, {});
      if (!parsed.ok) throw new Error(`${b.label}: ${parsed.reason}`);
      expect(parsed.metadata.batchStartRange, b.label).to.equal(b.startRange);
      expect(parsed.metadata.dataset).to.equal(b.dataset);
      expect(parsed.blocks, b.label).to.have.length(1);
      expect(parsed.blocks[0].block.height, b.label).to.equal(b.startRange);
      // Every transaction of the fixture block comes out as a record (Solana: except vote-only
      // ones), and so does every beacon withdrawal of an EVM block.
      const item: any = b.items[0];
      const txs: any[] = (item.block ?? item).transactions ?? item.tx;
      const withdrawals: any[] = (item.block ?? item).withdrawals ?? [];
      const expected = b.network.startsWith('solana') ? txs.filter((t) => !isVoteOnly(t)) : txs;
      expect(parsed.blocks[0].transactions, b.label).to.have.length(expected.length + withdrawals.length);
      expect(parsed.issues, b.label).to.deep.equal([]);
    }
  });

  it('turns any one fixture file into a batch, envelope removed, network from the file name', () => {
    const envelope = readFixtureJson('evm/bsc-testnet-11832497.eth_getBlockByHash_full.json');
    const b = batchFromFile('evm/bsc-testnet-11832497.eth_getBlockByHash_full.json', envelope);
    expect(b).to.deep.include({ network: 'bsc-testnet', dataset: 'block', startRange: parseInt(envelope.result.number, 16), items: [envelope.result] });
    const r = batchFromFile('/anywhere/evm/eth-mainnet-17053184.receipts.json', receipts);
    expect(r).to.deep.include({ network: 'ethereum-mainnet', dataset: 'receipts', startRange: n, items: [receipts] });
    expect(batchFromFile('x.json', { a: 1 }, { network: 'polygon-mainnet', dataset: 'logs' })).to.deep.include({ network: 'polygon-mainnet', dataset: 'logs', startRange: 0 });
    expect(() => batchFromFile('/tmp/mystery.json', {})).to.throw(/pass --network/);
    expect(() => batchFromFile('x.json', {}, { network: 'dogecoin-mainnet' })).to.throw(/unknown network/);
  });

  it('re-posts a recorded delivery {data, metadata} with its own range and dataset', () => {
    const delivery = { data: [block, block], metadata: { batch_start_range: 7, batch_end_range: 8, dataset: 'block', network: 'ethereum-sepolia' } };
    expect(batchFromFile('rec.json', delivery)).to.deep.include({ network: 'ethereum-sepolia', dataset: 'block', startRange: 7, endRange: 8, items: [block, block] });
    expect(() => batchFromFile('rec.json', { data: [], metadata: {} })).to.throw(/names no network/);
  });

  it('guesses QuickNode dataset names from what an element looks like', () => {
    expect(guessDataset(block)).to.equal('block');
    expect(guessDataset(receipts)).to.equal('receipts');
    expect(guessDataset(readFixtureJson('evm/eth-mainnet-1000000.trace_block.json').result)).to.equal('trace_blocks');
    expect(guessDataset(readFixtureJson('evm/eth-mainnet-17053184.debug_trace_callTracer.json'))).to.equal('debug_traces');
    expect(guessDataset(readFixtureJson('bitcoin/btc-mainnet-766390.getblock_verbosity2.json'))).to.equal('block');
  });

  it('plans only the asked network from the default set, and refuses a network it has nothing for', () => {
    expect(planReplay({ all: true, network: 'bitcoin-mainnet', fixturesDir: CHAIN_FIXTURES_DIR }).map((b) => b.network)).to.deep.equal(['bitcoin-mainnet']);
    expect(() => planReplay({ all: true, network: 'polygon-amoy', fixturesDir: CHAIN_FIXTURES_DIR })).to.throw(/nothing for network polygon-amoy/);
    const files = planReplay({ files: ['evm/op-mainnet-114290569.eth_getTransactionReceipt_l1info-deposit_0xb7c74afd.json'], fixturesDir: CHAIN_FIXTURES_DIR });
    expect(files.map((b) => [b.network, b.dataset])).to.deep.equal([['optimism-mainnet', 'receipts']]);
  });
});
