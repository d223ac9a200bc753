import { expect } from 'chai';
import type { NetworkInfo } from '@chainpipe/chains';
import { createDb, type Knex } from '@chainpipe/db';
import { evmDatasetItems, readFixtureJson, streamerBody, testEnv, testNetwork, tronBlockItem } from '@chainpipe/testing';
import { addressIndexEntries, parseChainPayload, type ParsedBlock } from '@chainpipe/tx-parsers';
import { TxQueryRepository, storeBlock, type StoreBlockResult } from '@chainpipe/tx-store';

type Json = any;

/**
 * Deliveries of one block by different datasets (a block stream, a receipts stream, a traces
 * stream) merge in tx-store: real fixtures parsed by the real parsers, stored in real Postgres,
 * each order under a network of its own (unique name and chain id) so the orders never share a
 * row. "One delivery carrying all" is the reference each order must end in: the same records,
 * the same address and token index rows (ids aside), and the history search finds the same.
 */
describe('tx-store: deliveries of the same block merge, never erase each other (real Postgres)', () => {
  let db: Knex;
  let search: TxQueryRepository;

  before(() => {
    db = createDb({ url: testEnv().databaseUrl, poolMax: 4 });
    search = new TxQueryRepository(db);
  });
  after(async () => {
    await db.destroy();
  });

  /** One delivery as chain-parser parses it (one element; issues not allowed). */
  function parse(network: NetworkInfo, items: Json[], dataset: string, start: number): ParsedBlock {
    const res = parseChainPayload(streamerBody(items, { network: network.network, dataset, start }), network);
    if (!res.ok) throw new Error(res.reason);
    expect(res.issues, dataset).to.deep.equal([]);
    expect(res.blocks, dataset).to.have.length(1);
    return res.blocks[0];
  }

  const store = (network: NetworkInfo, parsed: ParsedBlock, source?: string): Promise<StoreBlockResult> => storeBlock(db, { network, ...parsed, source });

  /** What a network holds, ids left out: records by hash, row columns, index and token index rows. */
  async function snapshot(network: NetworkInfo) {
    const where = { chain_type: network.chainType, chain_id: network.chainId };
    const txs = await db('tx.transactions').where(where).select('tx_hash', 'block_hash', 'height', 'tx_index', 'tx_time', 'tx_status', 'orphaned', 'is_reorg_resend', 'record');
    const address = await db('tx.address_index as a')
      .join('tx.transactions as t', 't.id', 'a.tx_id')
      .where({ 'a.chain_type': where.chain_type, 'a.chain_id': where.chain_id })
      .select('t.tx_hash', 'a.address', 'a.transfer_type', 'a.tokens');
    const token = await db('tx.address_token_index as k')
      .join('tx.transactions as t', 't.id', 'k.tx_id')
      .where({ 'k.chain_type': where.chain_type, 'k.chain_id': where.chain_id })
      .select('t.tx_hash', 'k.address', 'k.token', 'k.transfer_type');
    const blocks = await db('tx.blocks').where({ network: network.network }).select('height', 'hash', 'parent_hash', 'block_time', 'tx_count', 'orphaned');
    return {
      // Each order has a chain id of its own: compared without it.
      records: Object.fromEntries(txs.map((r) => [r.tx_hash, { ...r.record, chain_id: 'test' }])),
      rows: txs.map(({ record: _record, ...cols }) => JSON.stringify(cols)).sort(),
      address: address.map((r) => `${r.tx_hash} ${r.address} ${r.transfer_type ?? '-'} ${r.tokens.join(',')}`).sort(),
      token: token.map((r) => `${r.tx_hash} ${r.address} ${r.token} ${r.transfer_type ?? '-'}`).sort(),
      blocks,
    };
  }

  /** The index rows a network's stored records call for (addressIndexEntries of each record). */
  function indexOfRecords(records: Record<string, Json>, network: NetworkInfo): string[] {
    return Object.entries(records)
      .flatMap(([hash, rec]) => addressIndexEntries(rec, network.family).map((e) => `${hash} ${e.address} ${rec.transfer_type ?? '-'} ${e.tokens.join(',')}`))
      .sort();
  }

  function permutations<T>(xs: T[]): T[][] {
    if (xs.length <= 1) return [xs];
    return xs.flatMap((x, i) => permutations([...xs.slice(0, i), ...xs.slice(i + 1)]).map((p) => [x, ...p]));
  }

  for (const height of [13998626, 17053184] as const) {
    it(`eth-mainnet ${height}: every order of block, receipts and traces ends where one delivery carrying all does`, async function () {
      this.timeout(60_000);
      const items = evmDatasetItems(height);
      const deliveries = (network: NetworkInfo) => ({
        block: parse(network, [items.block], 'block', height),
        receipts: parse(network, [items.receipts], 'receipts', height),
        traces: parse(network, [items.traces], 'debug_traces', height),
      });
      const allNetwork = testNetwork('evm', `merge-all-${height}`);
      await store(allNetwork, parse(allNetwork, [items.all], 'block_with_receipts_debug_trace', height));
      const expected = await snapshot(allNetwork);
      expect(Object.keys(expected.records)).to.have.length(items.block.transactions.length);
      expect(expected.address).to.deep.equal(indexOfRecords(expected.records, allNetwork));

      for (const order of permutations(['block', 'receipts', 'traces'] as const)) {
        const network = testNetwork('evm', `merge-${order.map((o) => o[0]).join('')}`);
        const parts = deliveries(network);
        for (const name of order) await store(network, parts[name]);
        const got = await snapshot(network);
        const label = order.join(' → ');
        expect(got.records, label).to.deep.equal(expected.records);
        expect(got.rows, label).to.deep.equal(expected.rows);
        expect(got.address, label).to.deep.equal(expected.address);
        expect(got.token, label).to.deep.equal(expected.token);
        expect(got.blocks, label).to.deep.equal(expected.blocks);
        // Every delivery again, in the same order: nothing changes.
        for (const name of order) expect((await store(network, parts[name])).changed, `${label}: ${name} again`).to.deep.equal([]);
        expect(await snapshot(network)).to.deep.equal(got);
      }
    });
  }

  it('13998626: a search by an internal transfer\'s receiver finds the transaction whatever order the deliveries came in', async function () {
    this.timeout(30_000);
    const items = evmDatasetItems(13998626);
    const hash = '0xb240b922161bb0aeaa5ebe67e6cf77311092bd945b9582b8deba61e2ebdde74f';
    // The raw trace of 0xb240b922… (position 2) has 0x74de5d4f… send 24837665619619940 wei to
    // 0xf326e4de… (a fee recipient: the block names it only inside the call data). It is no
    // sender, receiver or token party of any transaction or log: only the traces index it.
    const receiver = '0xf326e4de8f66a0bdc0970b79e0924e33c79f1915';
    const key = (network: NetworkInfo) => [{ address: receiver, chainType: network.chainType, chainId: network.chainId }];
    const withoutTraces = testNetwork('evm', 'merge-search-none');
    await store(withoutTraces, parse(withoutTraces, [items.block], 'block', 13998626));
    await store(withoutTraces, parse(withoutTraces, [items.receipts], 'receipts', 13998626));
    expect(await search.history({ keys: key(withoutTraces), transferType: null, tokens: null, limit: 20, beforeId: null })).to.deep.equal([]);
    for (const order of [['traces', 'receipts', 'block'], ['block', 'traces', 'receipts'], ['receipts', 'block', 'traces']] as const) {
      const network = testNetwork('evm', 'merge-search');
      const parts = {
        block: parse(network, [items.block], 'block', 13998626),
        receipts: parse(network, [items.receipts], 'receipts', 13998626),
        traces: parse(network, [items.traces], 'debug_traces', 13998626),
      };
      for (const name of order) await store(network, parts[name]);
      const found = await search.history({ keys: key(network), transferType: null, tokens: null, limit: 20, beforeId: null });
      expect(found.map((r) => r.record.tx_hash), order.join(' → ')).to.deep.equal([hash]);
      const rec = found[0].record;
      expect(rec.internal_transactions.map((i) => i.to_address)).to.include(receiver);
      // The receipts' ERC-20 transfers are there too: the tx_type filter walks the merged type.
      expect(rec.token_transfers.length).to.equal(items.receipts[2].logs.filter((l: Json) => l.topics[0] === '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef').length);
      const byType = await search.history({ keys: key(network), transferType: 'token', tokens: null, limit: 20, beforeId: null });
      expect(byType.map((r) => r.record.tx_hash)).to.deep.equal([hash]);
    }
  });

  it('a change re-publishes, a delivery adding nothing does not; a replay of the same delivery answers as it did', async function () {
    this.timeout(30_000);
    const items = evmDatasetItems(13998626);
    const network = testNetwork('evm', 'merge-publish');
    const block = parse(network, [items.block], 'block', 13998626);
    const receipts = parse(network, [items.receipts], 'receipts', 13998626);
    const traces = parse(network, [items.traces], 'debug_traces', 13998626);
    const hashes = block.transactions.map((t) => t.tx_hash);

    const first = await store(network, block, 'raw:0:1');
    expect(first.changed.map((s) => s.tx.tx_hash)).to.deep.equal(hashes);
    // Receipts add gas used and a fee to every transaction: all of them change.
    const second = await store(network, receipts, 'raw:0:2');
    expect(second.changed.map((s) => s.tx.tx_hash)).to.deep.equal(hashes);
    expect(second.changed.every((s) => s.tx.gas_used !== null)).to.equal(true);
    // Traces change only the transactions with a value-moving nested call: the raw traces have 5
    // such calls (SOURCES.md), 4 of them in 0xb240b922… and one in another transaction.
    const third = await store(network, traces, 'raw:0:3');
    const withInternal = traces.transactions.filter((t) => t.internal_transactions.length > 0).map((t) => t.tx_hash);
    expect(third.changed.map((s) => s.tx.tx_hash)).to.have.members(withInternal);
    expect(third.changed.reduce((n, s) => n + s.tx.internal_transactions.length, 0)).to.equal(5);
    // Ids never change; the published record is the stored one.
    const ids = new Map(first.stored.map((s) => [s.tx.tx_hash, s.id]));
    for (const s of [...second.changed, ...third.changed]) expect(s.id).to.equal(ids.get(s.tx.tx_hash));
    const rows = await db('tx.transactions').where({ chain_type: network.chainType, chain_id: network.chainId }).select('tx_hash', 'record');
    const stored = new Map(rows.map((r) => [r.tx_hash, r.record]));
    for (const s of third.changed) expect(s.tx).to.deep.equal(stored.get(s.tx.tx_hash));

    // The same receipts delivered again (another delivery): adds nothing, publishes nothing.
    expect((await store(network, receipts, 'raw:0:4')).changed).to.deep.equal([]);
    // The traces delivery itself replayed (a crash before its publish): the rows it changed again.
    const replay = await store(network, traces, 'raw:0:3');
    expect(replay.changed.map((s) => [s.id, s.tx])).to.deep.equal(third.changed.map((s) => [s.id, s.tx]));
    // The block delivery replayed: every row was changed by a later delivery since, nothing to redo.
    expect((await store(network, block, 'raw:0:1')).changed).to.deep.equal([]);
    // Every call answered every transaction of the block, in block order, with the same ids.
    expect(replay.stored.map((s) => s.id)).to.deep.equal(first.stored.map((s) => s.id));
  });

  it('a different hash at the same height is still a reorg: the new block\'s records replace, they do not merge', async () => {
    const items = evmDatasetItems(13998626);
    const network = testNetwork('evm', 'merge-reorg');
    const full = parse(network, [items.all], 'block_with_receipts_debug_trace', 13998626);
    await store(network, full);
    // The same transactions in another block of the height, seen only as that block's body.
    const other = parse(network, [{ ...items.block, hash: '0x' + 'ab'.repeat(32) }], 'block', 13998626);
    const res = await store(network, other);
    expect(res.replacedBlocks).to.deep.equal([items.block.hash]);
    expect(res.changed).to.have.length(items.block.transactions.length);
    expect(res.changed.every((s) => s.is_reorg_resend && s.tx.gas_used === null && s.tx.internal_transactions.length === 0)).to.equal(true);
    const snap = await snapshot(network);
    expect(snap.address).to.deep.equal(indexOfRecords(snap.records, network));
  });

  it('a replay of a reorging delivery publishes its moved and orphaned transactions again; another delivery nothing', async () => {
    const items = evmDatasetItems(13998626);
    const network = testNetwork('evm', 'merge-reorg-replay');
    await store(network, parse(network, [items.all], 'block_with_receipts_debug_trace', 13998626), 'raw:0:1');
    // Another block of the height keeps the first 4 of the 7 transactions.
    const other = { ...items.block, hash: '0x' + 'cd'.repeat(32), transactions: items.block.transactions.slice(0, 4) };
    const reorg = parse(network, [other], 'block', 13998626);
    const first = await store(network, reorg, 'raw:0:2');
    expect(first.replacedBlocks).to.deep.equal([items.block.hash]);
    expect(first.orphaned.map((s) => s.tx.tx_hash)).to.have.members(items.block.transactions.slice(4).map((t: Json) => t.hash));
    expect(first.changed).to.have.length(4);
    const replay = await store(network, reorg, 'raw:0:2');
    expect(replay.replacedBlocks).to.deep.equal([]);
    expect(replay.orphaned.map((s) => [s.id, s.orphaned, s.tx.tx_hash])).to.have.deep.members(first.orphaned.map((s) => [s.id, true, s.tx.tx_hash]));
    expect(replay.changed.map((s) => [s.id, s.is_reorg_resend])).to.deep.equal(first.changed.map((s) => [s.id, true]));
    const again = await store(network, reorg, 'raw:0:3');
    expect([again.orphaned, again.changed]).to.deep.equal([[], []]);
  });

  it('eth-mainnet 1000000 and 1011973: trace_block and callTracer deliveries end in the same rows in either order', async () => {
    for (const height of [1000000, 1011973]) {
      const parity: Json[] = readFixtureJson(`evm/eth-mainnet-${height}.trace_block.json`).result;
      const frames: Json[] = readFixtureJson(`evm/eth-mainnet-${height}.debug_traceBlockByNumber_callTracer.json`).result;
      // The old geth results carry no txHash: each gets the hash trace_block gives its position.
      const hashAt = new Map(parity.filter((t) => t.transactionHash).map((t) => [t.transactionPosition, t.transactionHash]));
      const geth = frames.map((f, i) => ({ txHash: hashAt.get(i), result: f.result }));
      const snaps = [];
      for (const parityFirst of [true, false]) {
        const network = testNetwork('evm', `merge-traces-${height}`);
        const fromParity = parse(network, [parity], 'trace_blocks', height);
        const fromGeth = parse(network, [geth], 'debug_traces', height);
        for (const p of parityFirst ? [fromParity, fromGeth] : [fromGeth, fromParity]) await store(network, p);
        const snap = await snapshot(network);
        expect(snap.address).to.deep.equal(indexOfRecords(snap.records, network));
        // Placed in trace_block's block (callTracer results name none), whichever came first.
        expect(Object.values(snap.records).every((r: Json) => r.block_hash === parity[0].blockHash)).to.equal(true);
        snaps.push(snap);
      }
      expect(snaps[0]).to.deep.equal(snaps[1]);
    }
  });

  it('Tron 60836289 with and without the transaction info of 661f1df8…: either order ends as the block with its info', async () => {
    const raw: Json = tronBlockItem();
    const info: Json = readFixtureJson('tron/tron-mainnet-60836289.wallet_gettransactioninfobyid_661f1df8_visible.json');
    const height = raw.block_header.raw_data.number;
    const allNetwork = testNetwork('tvm', 'merge-tron-all');
    await store(allNetwork, parse(allNetwork, [raw, info], 'block', height));
    const expected = await snapshot(allNetwork);
    // The info's one log: a USDT Transfer to TWAo1… (topic 2 0xdc2c…) of 0x8e277354 = 2384950100.
    expect(expected.records[info.id].token_transfers.map((t: Json) => [t.amount, t.log_index])).to.deep.equal([['2384950100', 0]]);
    expect(expected.records[info.id].tx_fee).to.equal(String(info.fee));

    for (const withInfoFirst of [false, true]) {
      const network = testNetwork('tvm', 'merge-tron');
      const bare = parse(network, [raw], 'block', height);
      const withInfo = parse(network, [raw, info], 'block', height);
      const results = [];
      for (const p of withInfoFirst ? [withInfo, bare] : [bare, withInfo]) results.push(await store(network, p));
      const got = await snapshot(network);
      expect(got.records).to.deep.equal(expected.records);
      expect(got.address).to.deep.equal(expected.address);
      expect(got.token).to.deep.equal(expected.token);
      // The second delivery changes only the transaction the info is about, or nothing.
      expect(results[1].changed.map((s) => s.tx.tx_hash)).to.deep.equal(withInfoFirst ? [] : [info.id]);
    }
  });
});
