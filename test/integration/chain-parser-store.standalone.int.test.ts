import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import pg from 'pg';
import type { NetworkInfo } from '@chainpipe/chains';
import { MIGRATIONS_DIR, createDb, ensureDatabase, migrateLatest, type Knex } from '@chainpipe/db';
import {
  assertTestDatabase,
  bitcoinBlockItem,
  evmBlockItem,
  parseFixture,
  solanaBlockItem,
  testEnv,
  testNetwork,
  tronBlockItem,
  withSuffix,
} from '@chainpipe/testing';
import { addressIndexEntries, type NormalizedTx, type ParsedBlock } from '@chainpipe/tx-parsers';
import { NO_BLOCK, classifyStoreError, storeBlock, storeBlocks, type StoreBlockResult, type StoredTx } from '@chainpipe/tx-store';

/**
 * tx-store against the real Postgres. Every test stores real fixture blocks (parsed by the real
 * parsers) under a network of its own (unique name and chain id), so it sees only its own rows in
 * the shared database and never truncates anything.
 */
/** Transactions delivered without their block (an origin's answer, a pending one), stored as chain-parser stores them. */
const storeWithoutBlock = async (db: Knex, network: NetworkInfo, txs: NormalizedTx[]): Promise<StoredTx[]> => (await storeBlock(db, { network, block: NO_BLOCK, transactions: txs })).stored;

describe('tx-store: storeBlock, with and without a block (real Postgres)', () => {
  let db: Knex;
  const evmItem = evmBlockItem();

  before(() => {
    db = createDb({ url: testEnv().databaseUrl, poolMax: 6 });
  });
  after(async () => {
    await db.destroy();
  });

  const txRows = (network: NetworkInfo) => db('tx.transactions').where({ chain_type: network.chainType, chain_id: network.chainId });
  const blockRows = (network: NetworkInfo) => db('tx.blocks').where({ network: network.network }).orderBy('hash');
  const indexCount = async (network: NetworkInfo): Promise<number> =>
    Number((await db('tx.address_index').where({ chain_type: network.chainType, chain_id: network.chainId }).count<{ n: string }[]>({ n: '*' }))[0].n);
  const expectedIndexRows = (network: NetworkInfo, txs: NormalizedTx[]) => txs.reduce((n, t) => n + addressIndexEntries(t, network.family).length, 0);
  const idsByHash = (stored: StoredTx[]) => new Map(stored.map((s) => [s.tx.tx_hash, s.id]));

  /**
   * The filter indexes of a network as stored: address rows as `hash address type tokens`, token
   * rows as `hash address token type`, with the xmin of each row (which changes when a row is
   * rewritten), sorted.
   */
  async function filterIndexes(on: Knex, network: NetworkInfo) {
    const where = { chain_type: network.chainType, chain_id: network.chainId };
    const addr = await on('tx.address_index as a')
      .join('tx.transactions as t', 't.id', 'a.tx_id')
      .where({ 'a.chain_type': where.chain_type, 'a.chain_id': where.chain_id })
      .select('t.tx_hash', 'a.address', 'a.transfer_type', 'a.tokens', on.raw('a.xmin::text as xmin'));
    // A token row of a transaction that does not exist would be a leak: a left join shows it.
    const tokens = await on('tx.address_token_index as k')
      .leftJoin('tx.transactions as t', 't.id', 'k.tx_id')
      .where({ 'k.chain_type': where.chain_type, 'k.chain_id': where.chain_id })
      .select('t.tx_hash', 'k.address', 'k.token', 'k.transfer_type', on.raw('k.xmin::text as xmin'));
    return {
      address: addr.map((r) => `${r.tx_hash} ${r.address} ${r.transfer_type ?? '-'} ${r.tokens.join(',')}`).sort(),
      token: tokens.map((r) => `${r.tx_hash} ${r.address} ${r.token} ${r.transfer_type ?? '-'}`).sort(),
      xmins: [...addr, ...tokens].map((r) => r.xmin).sort(),
    };
  }

  /**
   * The filter indexes a network must have, from its stored records (every transaction, orphaned
   * ones too: their rows stay): per record, one address row per address `addressIndexEntries`
   * finds, with the record's transfer_type, and one token row per token that address moved.
   */
  async function filterIndexesOfRecords(on: Knex, network: NetworkInfo) {
    const rows = await on('tx.transactions').where({ chain_type: network.chainType, chain_id: network.chainId }).select('tx_hash', 'record');
    const address: string[] = [];
    const token: string[] = [];
    for (const { tx_hash, record } of rows) {
      for (const e of addressIndexEntries(record, network.family)) {
        address.push(`${tx_hash} ${e.address} ${record.transfer_type ?? '-'} ${e.tokens.join(',')}`);
        for (const t of e.tokens) token.push(`${tx_hash} ${e.address} ${t} ${record.transfer_type ?? '-'}`);
      }
    }
    return { address: address.sort(), token: token.sort() };
  }

  /** The filter indexes mirror the records exactly (no missing, stale or duplicate row); returns them. */
  async function expectIndexesMirrorRecords(network: NetworkInfo, on: Knex = db) {
    const stored = await filterIndexes(on, network);
    const expected = await filterIndexesOfRecords(on, network);
    expect(stored.address, 'tx.address_index').to.deep.equal(expected.address);
    expect(stored.token, 'tx.address_token_index').to.deep.equal(expected.token);
    return stored;
  }

  /** A copy of a parsed block under another block hash (what a reorg delivers), keeping `keep` txs. */
  function replacement(parsed: ParsedBlock, suffix: string, keep: NormalizedTx[]): ParsedBlock {
    const hash = withSuffix(parsed.block.hash!, suffix);
    return { block: { ...parsed.block, hash }, transactions: keep.map((t) => ({ ...t, block_hash: hash })) };
  }

  it('stores a 125-tx EVM block: block row, one row per transaction holding the record, the address index', async () => {
    const network = testNetwork('evm', 'store-evm');
    const parsed = parseFixture('evm', evmItem, network);
    expect(parsed.transactions).to.have.length(evmItem.block.transactions.length);
    const res = await storeBlock(db, { network, ...parsed });

    expect(res.stored.map((s) => s.tx.tx_hash)).to.deep.equal(evmItem.block.transactions.map((t: any) => t.hash));
    expect(res.orphaned).to.deep.equal([]);
    expect(res.inserted).to.equal(125);
    expect(res.stored.every((s) => !s.is_reorg_resend && !s.orphaned && s.network === network.network)).to.equal(true);

    const rows = await txRows(network).select('*');
    expect(rows).to.have.length(125);
    const byHash = new Map(rows.map((r) => [r.tx_hash, r]));
    for (const s of res.stored) {
      const row = byHash.get(s.tx.tx_hash);
      expect(row.id).to.equal(s.id);
      expect(row.record, 'the returned record is the stored one').to.deep.equal(s.tx);
      expect(row.block_hash).to.equal(evmItem.block.hash);
      expect(Number(row.height)).to.equal(Number(BigInt(evmItem.block.number)));
      expect(row.network).to.equal(network.network);
    }
    // The four status 0x0 receipts of the block (SOURCES.md) are stored failed.
    const failed = evmItem.receipts.filter((r: any) => r.status === '0x0').map((r: any) => r.transactionHash);
    expect(rows.filter((r) => r.tx_status === 'failed').map((r) => r.tx_hash)).to.have.members(failed);

    const [blockRow] = await blockRows(network);
    expect(blockRow).to.include({ hash: evmItem.block.hash, parent_hash: evmItem.block.parentHash, tx_count: 125, orphaned: false });
    expect(Number(blockRow.block_time)).to.equal(Number(BigInt(evmItem.block.timestamp)));

    expect(await indexCount(network)).to.equal(expectedIndexRows(network, parsed.transactions));
    // Token filter: receipt #0's first log is an ERC-20 Transfer to topic2's address of token log.address.
    const log = evmItem.receipts[0].logs[0];
    const to = '0x' + log.topics[2].slice(26);
    const idx = await db('tx.address_index').where({ address: to, chain_type: network.chainType, chain_id: network.chainId, tx_id: byHash.get(evmItem.receipts[0].transactionHash).id }).first();
    expect(idx.tokens).to.include(log.address.toLowerCase());
  });

  it('is idempotent: the same block again changes no row and returns every transaction with the same ids and flags', async () => {
    const network = testNetwork('evm', 'store-replay');
    const parsed = parseFixture('evm', evmItem, network);
    const first = await storeBlock(db, { network, ...parsed });
    const before = await txRows(network).select('id', 'tx_hash', 'record', 'is_reorg_resend', 'orphaned').orderBy('id');
    const indexBefore = await indexCount(network);

    const again = await storeBlock(db, { network, ...parsed });
    expect(again.stored).to.deep.equal(first.stored);
    expect(again.inserted).to.equal(0);
    expect(again.orphaned).to.deep.equal([]);
    expect(await txRows(network).select('id', 'tx_hash', 'record', 'is_reorg_resend', 'orphaned').orderBy('id')).to.deep.equal(before);
    expect(await indexCount(network)).to.equal(indexBefore);
    expect(await blockRows(network)).to.have.length(1);
  });

  it('two consumers storing the same block at once store it once and both answer with the same rows', async () => {
    const network = testNetwork('evm', 'store-race');
    const parsed = parseFixture('evm', evmItem, network);
    const [a, b] = await Promise.all([storeBlock(db, { network, ...parsed }), storeBlock(db, { network, ...parsed })]);
    expect(a.stored.map((s) => s.id)).to.deep.equal(b.stored.map((s) => s.id));
    expect(a.inserted + b.inserted).to.equal(125);
    expect(await txRows(network).count<{ n: string }[]>({ n: '*' })).to.deep.equal([{ n: '125' }]);
    expect(await indexCount(network)).to.equal(expectedIndexRows(network, parsed.transactions));
  });

  it('reorg by a different hash: the old block and its missing transactions are orphaned, moved ones become reorg resends, new ones are not', async () => {
    const network = testNetwork('evm', 'store-reorg');
    const parsed = parseFixture('evm', evmItem, network);
    const first = await storeBlock(db, { network, ...parsed });
    const firstIds = idsByHash(first.stored);

    // The new block keeps the first 120 transactions, loses the last 5, and adds one never seen.
    const fresh: NormalizedTx = { ...parsed.transactions[0], tx_hash: withSuffix(parsed.transactions[0].tx_hash, 'f1f1f1'), tx_index: 120 };
    const next = replacement(parsed, 'a1a1a1', [...parsed.transactions.slice(0, 120), fresh]);
    const res = await storeBlock(db, { network, ...next });

    expect(res.replacedBlocks).to.deep.equal([parsed.block.hash]);
    expect(res.stored).to.have.length(121);
    expect(res.inserted).to.equal(1);
    const moved = res.stored.slice(0, 120);
    expect(moved.every((s) => s.is_reorg_resend && !s.orphaned && s.tx.block_hash === next.block.hash)).to.equal(true);
    expect(moved.map((s) => s.id), 'moved rows keep their ids').to.deep.equal(parsed.transactions.slice(0, 120).map((t) => firstIds.get(t.tx_hash)));
    expect(res.stored[120]).to.include({ is_reorg_resend: false, orphaned: false });
    expect(res.stored[120].tx.tx_hash).to.equal(fresh.tx_hash);

    const lost = parsed.transactions.slice(120).map((t) => t.tx_hash);
    expect(res.orphaned.map((s) => s.tx.tx_hash)).to.have.members(lost);
    expect(res.orphaned.every((s) => s.orphaned && s.tx.block_hash === parsed.block.hash)).to.equal(true);
    expect(res.orphaned.map((s) => s.id)).to.have.members(lost.map((h) => firstIds.get(h)));

    const blocks = await blockRows(network);
    expect(blocks.map((b) => [b.hash, b.orphaned])).to.have.deep.members([
      [parsed.block.hash, true],
      [next.block.hash, false],
    ]);
    const rows = await txRows(network).select('tx_hash', 'orphaned', 'is_reorg_resend', 'block_hash');
    expect(rows).to.have.length(126);
    expect(rows.filter((r) => r.orphaned).map((r) => r.tx_hash)).to.have.members(lost);

    // What queries see (index joined with non-orphaned transactions) no longer holds the lost ones.
    const visible = await db('tx.address_index as a')
      .join('tx.transactions as t', 't.id', 'a.tx_id')
      .where({ 'a.chain_type': network.chainType, 'a.chain_id': network.chainId, 't.orphaned': false })
      .distinct('t.tx_hash');
    expect(visible.map((r) => r.tx_hash)).to.not.include.members(lost);
    expect(visible).to.have.length(121);

    // A replay of the new block answers with the flags as stored.
    const replay = await storeBlock(db, { network, ...next });
    expect(replay.stored).to.deep.equal(res.stored);
    expect(replay.orphaned).to.deep.equal([]);
    expect(replay.replacedBlocks).to.deep.equal([]);
  });

  it('reorg flagged by the streamer (blocks_reorged): the same handling; the flag on an unchanged block is a replay', async () => {
    const network = testNetwork('svm', 'store-flag');
    const parsed = parseFixture('svm', solanaBlockItem(), network);
    const first = await storeBlock(db, { network, ...parsed });

    const same = await storeBlock(db, { network, ...parsed, reorged: true });
    expect(same.stored).to.deep.equal(first.stored);
    expect(same.orphaned).to.deep.equal([]);

    const next = replacement(parsed, 'b2b2b2', parsed.transactions.slice(2));
    const res = await storeBlock(db, { network, ...next, reorged: true });
    expect(res.replacedBlocks).to.deep.equal([parsed.block.hash]);
    expect(res.orphaned.map((s) => s.tx.tx_hash)).to.have.members(parsed.transactions.slice(0, 2).map((t) => t.tx_hash));
    expect(res.stored.every((s) => s.is_reorg_resend)).to.equal(true);
  });

  it('a reorg back to the first block revives its orphaned transactions as reorg resends', async () => {
    const network = testNetwork('tvm', 'store-back');
    const parsed = parseFixture('tvm', tronBlockItem(), network);
    const first = await storeBlock(db, { network, ...parsed });
    const other = replacement(parsed, 'c3c3c3', parsed.transactions.slice(0, 100));
    await storeBlock(db, { network, ...other });

    const back = await storeBlock(db, { network, ...parsed });
    expect(back.replacedBlocks).to.deep.equal([other.block.hash]);
    expect(back.orphaned).to.deep.equal([]);
    expect(back.stored.map((s) => s.id)).to.deep.equal(first.stored.map((s) => s.id));
    expect(back.stored.every((s) => s.is_reorg_resend && !s.orphaned && s.tx.block_hash === parsed.block.hash)).to.equal(true);
    const blocks = await blockRows(network);
    expect(blocks.map((b) => [b.hash, b.orphaned])).to.have.deep.members([
      [parsed.block.hash, false],
      [other.block.hash, true],
    ]);
    expect(await txRows(network).where({ orphaned: true }).count<{ n: string }[]>({ n: '*' })).to.deep.equal([{ n: '0' }]);
  });

  it('tx_status only moves forward: pending → success/failed, never back to pending', async () => {
    const network = testNetwork('evm', 'store-status');
    const parsed = parseFixture('evm', evmItem, network);
    const [a, b, c] = parsed.transactions;
    const asPending = (t: NormalizedTx): NormalizedTx => ({ ...t, tx_status: 'pending', block_hash: null, height: null, tx_index: null });

    // Seen pending first, then in the block: the block's final status wins and the tx gets its block.
    const [pendingA] = await storeWithoutBlock(db, network, [asPending(a)]);
    expect(pendingA.tx.tx_status).to.equal('pending');
    const stored = await storeBlock(db, { network, block: parsed.block, transactions: [a, b, c] });
    expect(stored.stored[0].id).to.equal(pendingA.id);
    expect(stored.stored[0].tx.tx_status).to.equal(a.tx_status);
    expect(stored.stored[0].is_reorg_resend, 'first confirmation is not a reorg resend').to.equal(false);

    // A late pending report of a confirmed tx changes nothing.
    const [late] = await storeWithoutBlock(db, network, [asPending(b)]);
    expect(late.tx).to.deep.equal(stored.stored[1].tx);
    expect((await txRows(network).where({ tx_hash: b.tx_hash }).first()).tx_status).to.equal(b.tx_status);

    // A block record claiming pending does not undo a final status either.
    const res = await storeBlock(db, { network, block: parsed.block, transactions: [a, b, { ...c, tx_status: 'pending' }] });
    expect(res.stored[2].tx.tx_status).to.equal(c.tx_status);
    const row = await txRows(network).where({ tx_hash: c.tx_hash }).first();
    expect(row.tx_status).to.equal(c.tx_status);
    expect(row.record.tx_status).to.equal(c.tx_status);
  });

  it('transactions without a block: upserted by hash, status forward only, never moved out of a block they are in', async () => {
    const network = testNetwork('utxo', 'store-loose');
    const parsed = parseFixture('utxo', bitcoinBlockItem(766393), network);
    const [inBlock, ...rest] = parsed.transactions;
    const loose = rest.map((t): NormalizedTx => ({ ...t, tx_status: 'pending', block_hash: null, height: null, tx_index: null, tx_time: null }));

    const first = await storeWithoutBlock(db, network, loose);
    expect(first.map((s) => s.tx)).to.deep.equal(loose);
    expect(first.every((s) => !s.orphaned && !s.is_reorg_resend)).to.equal(true);
    expect(await indexCount(network)).to.equal(expectedIndexRows(network, loose));
    const again = await storeWithoutBlock(db, network, loose);
    expect(again).to.deep.equal(first);

    // pending → failed (origin says so), then pending again stays failed.
    const [failed] = await storeWithoutBlock(db, network, [{ ...loose[0], tx_status: 'failed' }]);
    expect(failed).to.include({ id: first[0].id });
    expect(failed.tx.tx_status).to.equal('failed');
    const [stillFailed] = await storeWithoutBlock(db, network, [loose[0]]);
    expect(stillFailed.tx.tx_status).to.equal('failed');

    // A tx in a live block keeps its block and record; a loose copy cannot move it.
    const block = await storeBlock(db, { network, block: parsed.block, transactions: [inBlock] });
    const originCopy: NormalizedTx = { ...inBlock, block_hash: null, height: null, tx_status: 'pending', tx_time: 1 };
    const [kept] = await storeWithoutBlock(db, network, [originCopy]);
    expect(kept.id).to.equal(block.stored[0].id);
    expect(kept.tx).to.deep.equal(block.stored[0].tx);
    const row = await txRows(network).where({ tx_hash: inBlock.tx_hash }).first();
    expect(row.block_hash).to.equal(parsed.block.hash);
    expect(Number(row.height)).to.equal(parsed.block.height);
  });

  it('stores the 1034-tx Bitcoin block (thousands of index rows) in chunked statements, and replays it', async () => {
    const network = testNetwork('utxo', 'store-big');
    const item = bitcoinBlockItem(766391);
    const parsed = parseFixture('utxo', item, network);
    expect(parsed.transactions).to.have.length(item.tx.length);
    const entries = expectedIndexRows(network, parsed.transactions);
    expect(entries).to.be.greaterThan(3000);

    // 2000 parameters per statement: 200 transactions and 400 index rows a statement.
    const res = await storeBlock(db, { network, ...parsed }, { maxParamsPerStatement: 2000 });
    expect(res.stored).to.have.length(1034);
    expect(res.stored.map((s) => s.tx.tx_hash)).to.deep.equal(item.tx.map((t: any) => t.txid));
    expect(await txRows(network).count<{ n: string }[]>({ n: '*' })).to.deep.equal([{ n: '1034' }]);
    expect(await indexCount(network)).to.equal(entries);
    // The coinbase pays the subsidy plus the fees: its outputs as stored, in satoshi.
    const coinbase = (await txRows(network).where({ tx_hash: item.tx[0].txid }).first()).record;
    expect(coinbase.to_details.map((d: any) => d.amount)).to.deep.equal(item.tx[0].vout.map((o: any) => String(Math.round(o.value * 1e8))));

    // The default budget stores it with one statement per table; the replay returns the same rows.
    // (How long it takes is measured by `npm run bench -- parse`, not asserted here.)
    const replay = await storeBlock(db, { network, ...parsed });
    expect(replay.stored).to.deep.equal(res.stored);
  });

  it('a value Postgres cannot hold fails the whole block as a data error, storing nothing', async () => {
    const network = testNetwork('evm', 'store-bad');
    const parsed = parseFixture('evm', evmItem, network);
    const bad = { ...parsed.transactions[3], tx_index: 2 ** 40 };
    let error: unknown;
    try {
      await storeBlock(db, { network, block: parsed.block, transactions: [parsed.transactions[0], bad] });
    } catch (err) {
      error = err;
    }
    expect(error, 'storeBlock rejected').to.be.instanceOf(Error);
    expect(classifyStoreError(error)).to.equal('data');
    expect((error as Error).message).to.match(/out of range for type integer/);
    expect((error as Error).message.length, 'the statement and its values are not in the message').to.be.lessThan(300);
    expect(await txRows(network).count<{ n: string }[]>({ n: '*' })).to.deep.equal([{ n: '0' }]);
    expect(await blockRows(network)).to.deep.equal([]);
  });

  it('storeBlocks: blocks sharing one DB transaction end as stored one after the other, a reorg among them included; a rejected one rolls back all', async () => {
    // The same deliveries on two networks of their own: one block per DB transaction on the first,
    // all in one on the second (a block, the next height, and a reorg of the first height).
    const [alone, shared] = [testNetwork('evm', 'store-alone'), testNetwork('evm', 'store-shared')];
    const deliveries = (network: NetworkInfo) => {
      const parsed = parseFixture('evm', evmItem, network);
      const nextHeight = { block: { ...parsed.block, height: parsed.block.height! + 1, hash: withSuffix(parsed.block.hash!, 'b2b2b2') }, transactions: parsed.transactions.slice(0, 3).map((t) => ({ ...t, tx_hash: withSuffix(t.tx_hash, 'c3c3c3') })) };
      return [parsed, nextHeight, replacement(parsed, 'a1a1a1', parsed.transactions.slice(0, 120))].map((b, i) => ({ network, ...b, source: `delivery-${i}` }));
    };
    const oneByOne: StoreBlockResult[] = [];
    for (const input of deliveries(alone)) oneByOne.push(await storeBlock(db, input));
    const together = await storeBlocks(db, deliveries(shared));

    // Ids differ between the networks: compare what each block's result says by hash.
    const shape = (r: StoreBlockResult) => ({
      stored: r.stored.map((s) => [s.tx.tx_hash, s.tx.block_hash, s.orphaned, s.is_reorg_resend]),
      changed: r.changed.map((s) => s.tx.tx_hash),
      orphaned: r.orphaned.map((s) => s.tx.tx_hash).sort(),
      replacedBlocks: r.replacedBlocks,
      inserted: r.inserted,
    });
    expect(together.map(shape)).to.deep.equal(oneByOne.map(shape));
    expect(together[2].replacedBlocks, 'the reorg saw the block stored earlier in the same DB transaction').to.have.length(1);
    const rowsOf = async (network: NetworkInfo) => (await txRows(network).select('tx_hash', 'block_hash', 'orphaned', 'is_reorg_resend')).map((r) => `${r.tx_hash} ${r.block_hash} ${r.orphaned} ${r.is_reorg_resend}`).sort();
    expect(await rowsOf(shared)).to.deep.equal(await rowsOf(alone));
    expect((await blockRows(shared)).map((b) => [b.height, b.hash, b.orphaned])).to.deep.equal((await blockRows(alone)).map((b) => [b.height, b.hash, b.orphaned]));
    expect(await indexCount(shared)).to.equal(await indexCount(alone));

    // A block Postgres rejects fails the whole DB transaction: the good block before it is not stored either.
    const network = testNetwork('evm', 'store-shared-bad');
    const parsed = parseFixture('evm', evmItem, network);
    const bad = { block: { ...parsed.block, height: parsed.block.height! + 1, hash: withSuffix(parsed.block.hash!, 'd4d4d4') }, transactions: [{ ...parsed.transactions[3], tx_hash: withSuffix(parsed.transactions[3].tx_hash, 'd4d4d4'), tx_index: 2 ** 40 }] };
    let error: unknown;
    await storeBlocks(db, [{ network, ...parsed }, { network, ...bad }]).catch((err) => (error = err));
    expect(classifyStoreError(error)).to.equal('data');
    expect(await txRows(network).count<{ n: string }[]>({ n: '*' })).to.deep.equal([{ n: '0' }]);
    expect(await blockRows(network)).to.deep.equal([]);
  });

  it('keeps a record with a NUL character (Postgres text cannot) as U+FFFD instead of failing the block', async () => {
    const network = testNetwork('svm', 'store-nul');
    const parsed = parseFixture('svm', solanaBlockItem(), network);
    const tx = { ...parsed.transactions[0], method_call: 'memo:\u0000end', symbol: 'back\\u0000slash' };
    const res = await storeBlock(db, { network, block: parsed.block, transactions: [tx] });
    const row = await txRows(network).where({ tx_hash: tx.tx_hash }).first();
    expect(row.record.method_call).to.equal('memo:\ufffdend');
    // A literal backslash-u0000 text is not a NUL and is kept as it was.
    expect(row.record.symbol).to.equal('back\\u0000slash');
    expect(res.stored[0].id).to.equal(row.id);
  });

  it('stores a block\'s transactions in that block whatever their own block fields say; a hash-less block keeps them where they are', async () => {
    const network = testNetwork('evm', 'store-place');
    const parsed = parseFixture('evm', evmItem, network);
    const [a, b] = parsed.transactions;
    const res = await storeBlock(db, { network, block: parsed.block, transactions: [{ ...a, block_hash: null, height: null }, b] });
    expect(res.stored[0].tx).to.include({ block_hash: parsed.block.hash, height: parsed.block.height });
    const row = await txRows(network).where({ tx_hash: a.tx_hash }).first();
    expect(row.block_hash).to.equal(parsed.block.hash);
    expect(row.record.block_hash).to.equal(parsed.block.hash);

    // getTransaction-style results (no block hash) grouped as a block of their slot: no block row, no move.
    const hashless = await storeBlock(db, { network, block: { height: parsed.block.height, hash: null, parent_hash: null, time: null }, transactions: [{ ...b, block_hash: null, tx_index: null }] });
    expect(hashless.stored[0]).to.include({ id: res.stored[1].id, is_reorg_resend: false, orphaned: false });
    expect(hashless.stored[0].tx).to.deep.equal(res.stored[1].tx);
    expect(await blockRows(network)).to.have.length(1);
  });

  it('stores blocks of every family (Solana, Tron) with their index', async () => {
    for (const [family, item] of [['svm', solanaBlockItem()], ['tvm', tronBlockItem()]] as const) {
      const network = testNetwork(family, `store-${family}`);
      const parsed = parseFixture(family, item, network);
      const res = await storeBlock(db, { network, ...parsed });
      expect(res.stored).to.have.length(parsed.transactions.length);
      expect(await indexCount(network)).to.equal(expectedIndexRows(network, parsed.transactions));
      const rows = await txRows(network).select('tx_hash', 'record');
      expect(new Map(rows.map((r) => [r.tx_hash, r.record]))).to.deep.equal(new Map(res.stored.map((s) => [s.tx.tx_hash, s.tx])));
    }
  });
  describe('filter indexes: address_index.transfer_type and tx.address_token_index', () => {
    it('a stored block: every address row carries its record\'s transfer_type, one token row per (address, token it moved)', async () => {
      const network = testNetwork('evm', 'filters-store');
      const parsed = parseFixture('evm', evmItem, network);
      await storeBlock(db, { network, ...parsed });
      const stored = await expectIndexesMirrorRecords(network);
      // Read from the raw fixture: receipt #0's first log is an ERC-20 Transfer of log.address to topic2.
      const log = evmItem.receipts[0].logs[0];
      const to = '0x' + log.topics[2].slice(26);
      const type = parsed.transactions.find((t) => t.tx_hash === evmItem.receipts[0].transactionHash)!.transfer_type;
      expect(stored.token).to.include(`${evmItem.receipts[0].transactionHash} ${to} ${log.address.toLowerCase()} ${type}`);
      expect(stored.token.length).to.be.greaterThan(100);
      expect([...new Set(stored.address.map((r) => r.split(' ')[2]))]).to.include.members(['token', 'native', 'contract_call']);
    });

    it('a replay and a race rewrite no index row (same rows, same row versions), and add none', async () => {
      const network = testNetwork('evm', 'filters-replay');
      const parsed = parseFixture('evm', evmItem, network);
      await Promise.all([storeBlock(db, { network, ...parsed }), storeBlock(db, { network, ...parsed })]);
      const first = await expectIndexesMirrorRecords(network);
      await storeBlock(db, { network, ...parsed });
      await storeBlock(db, { network, ...parsed, reorged: true });
      const again = await expectIndexesMirrorRecords(network);
      expect(again).to.deep.equal(first);
    });

    it('a reorg that rewrites records moves the index along: types change, lost tokens and addresses go, a reorg back restores them', async () => {
      const network = testNetwork('evm', 'filters-reorg');
      const parsed = parseFixture('evm', evmItem, network);
      await storeBlock(db, { network, ...parsed });
      const before = await expectIndexesMirrorRecords(network);

      // The new block keeps every transaction, but one token transfer failed there (a reorg may turn
      // a transfer into a failed call: no token moved, a plain contract call) and the last 5 are gone.
      const addressesOf = (t: NormalizedTx) => addressIndexEntries(t, network.family).map((e) => e.address);
      const asFailed = (t: NormalizedTx): NormalizedTx => ({ ...t, tx_status: 'failed', transfer_type: 'contract_call', token_transfers: [] });
      // One whose token transfers name an address nothing else in the transaction does.
      const changedAt = parsed.transactions.findIndex((t, i) => i < 120 && t.transfer_type === 'token' && addressesOf(asFailed(t)).length < addressesOf(t).length);
      expect(changedAt).to.be.at.least(0);
      const changed = parsed.transactions[changedAt];
      // And one whose record is classified differently there while still moving its tokens.
      const retypedAt = parsed.transactions.findIndex((t, i) => i < 120 && i !== changedAt && t.transfer_type === 'token');
      const retyped = parsed.transactions[retypedAt];
      const keep = parsed.transactions.slice(0, 120).map((t, i) => (i === changedAt ? asFailed(t) : i === retypedAt ? { ...t, transfer_type: 'contract_call' as const } : t));
      const next = replacement(parsed, 'd4d4d4', keep);
      const res = await storeBlock(db, { network, ...next });
      expect(res.orphaned).to.have.length(5);
      const after = await expectIndexesMirrorRecords(network);
      expect(after.token.filter((r) => r.startsWith(changed.tx_hash + ' ')), 'its token rows are gone').to.deep.equal([]);
      expect(after.address.filter((r) => r.startsWith(changed.tx_hash + ' ')).every((r) => r.split(' ')[2] === 'contract_call')).to.equal(true);
      const retypedTokens = after.token.filter((r) => r.startsWith(retyped.tx_hash + ' '));
      expect(retypedTokens.length).to.be.greaterThan(0);
      expect(retypedTokens.every((r) => r.endsWith(' contract_call'))).to.equal(true);
      // The addresses only its token transfers named are no longer in it.
      const gone = addressesOf(changed).filter((a) => !addressesOf(asFailed(changed)).includes(a));
      for (const a of gone) {
        expect(before.address.some((r) => r.startsWith(`${changed.tx_hash} ${a} `))).to.equal(true);
        expect(after.address.some((r) => r.startsWith(`${changed.tx_hash} ${a} `))).to.equal(false);
      }
      // The orphaned transactions keep their rows (readers skip them by the orphaned flag).
      expect(after.token.length).to.be.lessThan(before.token.length);

      const replay = await storeBlock(db, { network, ...next });
      expect(replay.orphaned).to.deep.equal([]);
      expect(await expectIndexesMirrorRecords(network)).to.deep.equal(after);

      await storeBlock(db, { network, ...parsed });
      const back = await expectIndexesMirrorRecords(network);
      expect(back.address).to.deep.equal(before.address);
      expect(back.token).to.deep.equal(before.token);
    });

    it('a loose record then its block: the type and token rows follow the stored record each time', async () => {
      const network = testNetwork('evm', 'filters-loose');
      const parsed = parseFixture('evm', evmItem, network);
      const tx = parsed.transactions.find((t) => t.transfer_type === 'token')!;
      // Seen pending first: no receipt yet, so no token transfer and no type.
      await storeWithoutBlock(db, network, [{ ...tx, tx_status: 'pending', block_hash: null, height: null, tx_index: null, token_transfers: [], transfer_type: null }]);
      const pending = await expectIndexesMirrorRecords(network);
      expect(pending.token).to.deep.equal([]);
      expect(pending.address.every((r) => r.split(' ')[2] === '-')).to.equal(true);
      await storeBlock(db, { network, block: parsed.block, transactions: [tx] });
      const mined = await expectIndexesMirrorRecords(network);
      expect(mined.token.length).to.be.greaterThan(0);
      expect(mined.address.every((r) => r.split(' ')[2] === 'token')).to.equal(true);
      // A late loose copy of a transaction in a live block changes nothing.
      await storeWithoutBlock(db, network, [{ ...tx, block_hash: null, height: null, token_transfers: [], transfer_type: null }]);
      expect(await expectIndexesMirrorRecords(network)).to.deep.equal(mined);
    });

    it('writes token rows in chunked statements as well (a few rows per statement), Solana mints included', async () => {
      const network = testNetwork('evm', 'filters-chunks');
      const parsed = parseFixture('evm', evmItem, network);
      // 60 parameters per statement: 10 index or token rows, 6 transactions.
      await storeBlock(db, { network, ...parsed }, { maxParamsPerStatement: 60 });
      const small = await expectIndexesMirrorRecords(network);
      await storeBlock(db, { network, ...parsed });
      expect(await expectIndexesMirrorRecords(network)).to.deep.equal(small);

      const sol = testNetwork('svm', 'filters-sol');
      const solParsed = parseFixture('svm', solanaBlockItem(), sol);
      await storeBlock(db, { network: sol, ...solParsed }, { maxParamsPerStatement: 60 });
      const solIndexes = await expectIndexesMirrorRecords(sol);
      const mints = solParsed.transactions.flatMap((t) => t.token_transfers.map((x) => x.mint)).filter(Boolean);
      expect(mints.length).to.be.greaterThan(0);
      expect(solIndexes.token.some((r) => r.split(' ')[2] === mints[0])).to.equal(true);
    });

    it('the migration backfills both from the records of a database filled before it (down, then up: the same rows)', async function () {
      this.timeout(60_000);
      // A database of its own: the shared test schema is never rolled back.
      const url = new URL(testEnv().databaseUrl);
      url.pathname = `/chainpipe_test_backfill_${randomBytes(4).toString('hex')}`;
      assertTestDatabase(url.toString());
      await ensureDatabase(url.toString());
      const other = createDb({ url: url.toString(), poolMax: 2 });
      const migrations = { directory: MIGRATIONS_DIR, loadExtensions: ['.ts'], tableName: 'knex_migrations', schemaName: 'public' };
      try {
        await migrateLatest(other);
        const evm = testNetwork('evm', 'backfill-evm');
        const parsed = parseFixture('evm', evmItem, evm);
        await storeBlock(other, { network: evm, ...parsed });
        const changed = parsed.transactions.findIndex((t) => t.transfer_type === 'token');
        await storeBlock(other, { network: evm, ...replacement(parsed, 'e5e5e5', parsed.transactions.slice(0, 100).map((t, i) => (i === changed ? { ...t, transfer_type: 'contract_call' as const, token_transfers: [] } : t))) });
        const tron = testNetwork('tvm', 'backfill-tron');
        await storeBlock(other, { network: tron, ...parseFixture('tvm', tronBlockItem(), tron) });
        const written = [await expectIndexesMirrorRecords(evm, other), await expectIndexesMirrorRecords(tron, other)];

        const [, undone] = (await other.migrate.down({ ...migrations, name: '20261121020000_address_index_filters.ts' })) as [number, string[]];
        expect(undone).to.deep.equal(['20261121020000_address_index_filters.ts']);
        expect((await other.raw("select to_regclass('tx.address_token_index') as t")).rows[0].t).to.equal(null);
        const [, applied] = (await other.migrate.up({ ...migrations, name: '20261121020000_address_index_filters.ts' })) as [number, string[]];
        expect(applied).to.deep.equal(['20261121020000_address_index_filters.ts']);

        const backfilled = [await expectIndexesMirrorRecords(evm, other), await expectIndexesMirrorRecords(tron, other)];
        expect(backfilled.map((b) => [b.address, b.token])).to.deep.equal(written.map((w) => [w.address, w.token]));
        expect(backfilled[0].token.length).to.be.greaterThan(100);
        // And the write path carries on over backfilled rows: a replay rewrites none of them.
        await storeBlock(other, { network: tron, ...parseFixture('tvm', tronBlockItem(), tron) });
        expect((await filterIndexes(other, tron)).xmins).to.deep.equal(backfilled[1].xmins);
      } finally {
        await other.destroy();
        const admin = new pg.Client({ connectionString: Object.assign(new URL(url), { pathname: '/postgres' }).toString() });
        await admin.connect();
        await admin.query(`drop database if exists "${url.pathname.slice(1)}" with (force)`);
        await admin.end();
      }
    });
  });
});
