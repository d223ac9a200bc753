import { expect } from 'chai';
import { Registry } from 'prom-client';
import { createParserHandlers, normalizedTxCheck } from '@chainpipe/chain-parser';
import { TOPICS, loadContracts, type ChainTxMessage } from '@chainpipe/contracts';
import { createDb, type Knex } from '@chainpipe/db';
import type { ConsumedRecord, OutgoingMessage } from '@chainpipe/kafka';
import { RetryableError, createLogger } from '@chainpipe/runtime';
import { datasetOf, evmBlockItem, FIXTURE_NETWORKS, type FixtureFamily, randomSuffix, rebaseBlock, streamerBody, testEnv, tronBlockItem, type Rebased } from '@chainpipe/testing';
import { resolveStoredInputs, storeBlocks, type StoreBlockInput, type StoreBlockResult } from '@chainpipe/tx-store';

type Json = any;

/**
 * chain-parser's chain.raw handler in-process on the test database: the records of one call
 * carry blocks of several networks (one chain.raw partition carries several networks), each
 * network's blocks are stored in order and different networks side by side. `storeBlocks` is
 * the real one (tx-store against Postgres), observed to see what runs at once; what the handler
 * publishes is collected as the producer would receive it.
 */
describe('chain-parser handler: the networks of one call stored side by side (real Postgres)', function () {
  this.timeout(60_000);
  let db: Knex;
  const heightBase = 3_000_000_000 + Math.floor(Math.random() * 1e9);
  let height = 0;
  let offset = 0;

  before(() => {
    db = createDb({ url: testEnv().databaseUrl, poolMax: 6 });
  });
  after(async () => {
    await db.destroy();
  });

  const block = (family: FixtureFamily): Rebased => {
    height += 10;
    return rebaseBlock(family, family === 'evm' ? evmBlockItem() : tronBlockItem(), heightBase + height, randomSuffix());
  };
  const record = (family: FixtureFamily, b: Rebased): ConsumedRecord<Buffer> => {
    const network = FIXTURE_NETWORKS[family];
    const dataset = datasetOf(family);
    return {
      topic: TOPICS.chainRaw.name,
      partition: 0,
      offset: String(offset++),
      key: network,
      value: Buffer.from(streamerBody([b.item], { network, dataset, start: b.height })),
      headers: { network, received_at: String(Date.now()), content_encoding: 'identity', content_type: 'application/json', ingest_route: 'stream', request_id: `r${offset}`, 'batch-start-range': String(b.height), 'stream-dataset': dataset },
      timestamp: String(Date.now()),
    };
  };

  /** The handler over the real store, with what each store call did and the messages it published. */
  function handler(opts: { networksConcurrently: number; failNetworkOnce?: string }) {
    const calls: Array<{ network: string; heights: number[]; start: number; end: number }> = [];
    const published: OutgoingMessage<ChainTxMessage>[] = [];
    let failing = opts.failNetworkOnce;
    const handlers = createParserHandlers({
      storeBlocks: async (inputs: StoreBlockInput[]): Promise<StoreBlockResult[]> => {
        const start = performance.now();
        const network = inputs[0].network.network;
        if (network === failing) {
          failing = undefined;
          // A connection lost mid-call: retryable, not a data error.
          throw Object.assign(new Error('Connection terminated unexpectedly'), { code: 'ECONNRESET' });
        }
        const results = await storeBlocks(db, inputs, { prepare: resolveStoredInputs });
        calls.push({ network, heights: inputs.map((i) => Number(i.block.height)), start, end: performance.now() });
        return results;
      },
      publish: async (messages) => {
        published.push(...messages);
        return [];
      },
      checkTx: normalizedTxCheck(loadContracts()),
      networksConcurrently: opts.networksConcurrently,
      logger: createLogger({ name: 'parser-test', level: 'silent' }),
      registry: new Registry(),
    });
    return { chainRaw: handlers.chainRaw, calls, published };
  }

  /** What the consumer hands a handler call besides its records. */
  const ctx = { heartbeat: async () => undefined, signal: new AbortController().signal };
  const overlapped = (a: { start: number; end: number }, b: { start: number; end: number }) => a.start < b.end && b.start < a.end;

  it('stores each network in order and the networks at once; publishes every transaction in record order', async () => {
    const [e1, t1, e2, t2] = [block('evm'), block('tvm'), block('evm'), block('tvm')];
    const records = [record('evm', e1), record('tvm', t1), record('evm', e2), record('tvm', t2)];
    const h = handler({ networksConcurrently: 4 });
    const out = await h.chainRaw(records, ctx);
    expect(out ?? { deadLetters: [] }).to.deep.equal({ deadLetters: [] });

    // One DB transaction per network (its blocks in delivery order), the two running at once.
    const evm = h.calls.filter((c) => c.network === 'ethereum-mainnet');
    const tron = h.calls.filter((c) => c.network === 'tron-mainnet');
    expect(evm.map((c) => c.heights)).to.deep.equal([[e1.height, e2.height]]);
    expect(tron.map((c) => c.heights)).to.deep.equal([[t1.height, t2.height]]);
    expect(overlapped(evm[0], tron[0]), 'the two networks stored side by side').to.equal(true);

    // Every transaction of the four blocks, published in record order (block by block as delivered).
    const hashesOf = (b: Rebased, family: FixtureFamily) => (family === 'evm' ? b.item.block.transactions.map((t: Json) => t.hash) : b.item.transactions.map((t: Json) => t.txID));
    const expected = [hashesOf(e1, 'evm'), hashesOf(t1, 'tvm'), hashesOf(e2, 'evm'), hashesOf(t2, 'tvm')];
    const got = h.published.map((m) => m.value.tx.tx_hash);
    expect(got).to.have.length(expected.flat().length);
    // Within a block the store's order; across blocks the records' order.
    const blockOf = (hash: string) => expected.findIndex((hs) => hs.includes(hash));
    expect(got.map(blockOf)).to.deep.equal([...got.map(blockOf)].sort((a, b) => a - b));
    expect(new Set(got)).to.deep.equal(new Set(expected.flat()));
    const rows = await db('tx.transactions').whereIn('block_hash', [e1.blockHash, e2.blockHash, t1.blockHash, t2.blockHash]).count<{ count: string }[]>('* as count');
    expect(Number(rows[0].count)).to.equal(expected.flat().length);
  });

  it('one network failing: the other finishes, the call is retried, and the replay publishes both networks\' transactions', async () => {
    const [e1, t1] = [block('evm'), block('tvm')];
    const records = [record('evm', e1), record('tvm', t1)];
    const h = handler({ networksConcurrently: 4, failNetworkOnce: 'tron-mainnet' });
    let thrown: unknown;
    await h.chainRaw(records, ctx).catch((err: unknown) => (thrown = err));
    expect(thrown).to.be.instanceOf(RetryableError);
    // The EVM lane committed before the error came out; nothing was published.
    expect(h.calls.map((c) => c.network)).to.deep.equal(['ethereum-mainnet']);
    expect(h.published).to.have.length(0);
    expect(await db('tx.transactions').where({ block_hash: e1.blockHash }).count<{ count: string }[]>('* as count')).to.deep.equal([{ count: String(e1.item.block.transactions.length) }]);

    // The consumer replays the call: the committed block is stored again (its rows changed by
    // the same record: `changed_by`) and its transactions go out with the new ones.
    await h.chainRaw(records, ctx);
    const got = new Set(h.published.map((m) => m.value.tx.tx_hash));
    expect(got.size).to.equal(e1.item.block.transactions.length + t1.item.transactions.length);
    for (const t of e1.item.block.transactions) expect(got.has(t.hash)).to.equal(true);
    for (const t of t1.item.transactions) expect(got.has(t.txID)).to.equal(true);
  });

  it('networksConcurrently 1: the networks one after the other', async () => {
    const [e1, t1] = [block('evm'), block('tvm')];
    const h = handler({ networksConcurrently: 1 });
    await h.chainRaw([record('evm', e1), record('tvm', t1)], ctx);
    expect(h.calls.map((c) => c.network)).to.deep.equal(['ethereum-mainnet', 'tron-mainnet']);
    expect(overlapped(h.calls[0], h.calls[1])).to.equal(false);
  });
});
