import { expect } from 'chai';
import { networkByName } from '@chainpipe/chains';
import { TOPICS, loadContracts } from '@chainpipe/contracts';
import { recordBytes, splitIntoParts, topicBudget } from '@chainpipe/kafka';
import type { StoredTx } from '@chainpipe/tx-store';
import { bitcoinBlockItem, evmBlockItem, parseFixture, solanaBlockItem, streamerBody, tronBlockItem } from '@chainpipe/testing';
import { blockMessages, blockOutcome, chainTxKey, deliverySource, planFetched, planRecord, type TxCheck } from '../src/plan';
import { normalizedTxCheck } from '../src/tx-contract';

const checkTx = normalizedTxCheck(loadContracts());
const accept: TxCheck = () => null;
const evm = evmBlockItem();
const height = Number(BigInt(evm.block.number));
const evmBody = (meta: { reorged?: number[] } = {}) =>
  Buffer.from(streamerBody([evm], { network: 'ethereum-mainnet', dataset: 'block_with_receipts', start: height, ...meta }));
const headers = (extra: Record<string, string> = {}) => ({ network: 'ethereum-mainnet', received_at: '1700000000000', content_encoding: 'identity', ingest_route: 'stream', ...extra });

describe('chain-parser plan (pure)', () => {
  describe('planRecord', () => {
    it('turns a streamer delivery into one store input per block, transactions in block order', () => {
      const plan = planRecord(evmBody(), headers(), checkTx);
      if (plan.kind !== 'store') throw new Error(`expected store, got ${plan.kind}`);
      expect(plan.network.network).to.equal('ethereum-mainnet');
      expect(plan.issues).to.deep.equal([]);
      expect(plan.blocks).to.have.length(1);
      const [b] = plan.blocks;
      expect(b.block).to.include({ height, hash: evm.block.hash });
      expect(b.transactions.map((t) => t.tx_hash)).to.deep.equal(evm.block.transactions.map((t: any) => t.hash));
      expect(b.reorged).to.equal(false);
    });

    it('every fixture family\'s records satisfy the normalized-tx contract', () => {
      const cases = [
        ['solana-devnet', solanaBlockItem()],
        ['tron-mainnet', tronBlockItem()],
        ['bitcoin-mainnet', bitcoinBlockItem(766390)],
      ] as const;
      for (const [network, item] of cases) {
        const parsed = parseFixture(network === 'solana-devnet' ? 'svm' : network === 'tron-mainnet' ? 'tvm' : 'utxo', item, networkByName(network)!);
        expect(parsed.transactions.map(checkTx).filter((e) => e !== null), network).to.deep.equal([]);
      }
    });

    it('marks a block reorged when its height is in blocks_reorged, from the body or the carried header', () => {
      const fromBody = planRecord(evmBody({ reorged: [height - 1, height] }), headers(), accept);
      const fromHeader = planRecord(evmBody(), headers({ 'batch-blocks-reorged': `[${height}]` }), accept);
      const other = planRecord(evmBody({ reorged: [height + 1] }), headers(), accept);
      for (const [plan, expected] of [[fromBody, true], [fromHeader, true], [other, false]] as const) {
        if (plan.kind !== 'store') throw new Error('expected store');
        expect(plan.blocks[0].reorged).to.equal(expected);
      }
    });

    it('drops a record that breaks the contract from its block and reports it as an issue', () => {
      const bad = evm.block.transactions[7].hash;
      const plan = planRecord(evmBody(), headers(), (tx) => (tx.tx_hash === bad ? 'amount must match pattern' : null));
      if (plan.kind !== 'store') throw new Error('expected store');
      expect(plan.blocks[0].transactions).to.have.length(124);
      expect(plan.blocks[0].transactions.map((t) => t.tx_hash)).to.not.include(bad);
      expect(plan.issues).to.have.length(1);
      expect(plan.issues[0]).to.include({ block_index: 0, tx_hash: bad, tx_index: 7 });
      expect(plan.issues[0].reason).to.match(/breaks its contract: amount must match pattern/);
    });

    it('dead-letters what can never be stored: unknown network, not a delivery, no readable block', () => {
      expect(planRecord(evmBody(), headers({ network: 'dogecoin-mainnet' }), accept)).to.deep.include({ kind: 'dead', code: 'UNKNOWN_NETWORK' });
      const garbage = planRecord(Buffer.from('not json'), headers(), accept);
      expect(garbage).to.include({ kind: 'dead', code: 'UNPARSABLE', network: 'ethereum-mainnet' });
      expect((garbage as { reason: string }).reason).to.match(/not JSON/);
      expect(planRecord(Buffer.from('42'), headers(), accept)).to.include({ kind: 'dead', code: 'UNPARSABLE' });
      const unreadable = planRecord(Buffer.from(JSON.stringify({ data: [{ hello: 'world' }], metadata: {} })), headers(), accept);
      expect(unreadable).to.include({ kind: 'dead', code: 'NO_BLOCKS' });
    });

    it('an empty batch is nothing to do, not an error', () => {
      const plan = planRecord(Buffer.from(JSON.stringify({ data: [], metadata: { batch_start_range: 1 } })), headers(), accept);
      expect(plan).to.deep.include({ kind: 'store', blocks: [], issues: [] });
    });

    it('keeps the readable blocks of a delivery next to an unreadable element', () => {
      const body = Buffer.from(streamerBody([evm, { nonsense: true }], { network: 'ethereum-mainnet', dataset: 'block_with_receipts', start: height }));
      const plan = planRecord(body, headers(), accept);
      if (plan.kind !== 'store') throw new Error('expected store');
      expect(plan.blocks).to.have.length(1);
      expect(plan.issues).to.have.length(1);
      expect(plan.issues[0].block_index).to.equal(1);
    });
  });

  describe('planFetched', () => {
    const [tx] = parseFixture('evm', evm, networkByName('ethereum-mainnet')!).transactions;

    it('stores a fetched transaction as a delivery of that one transaction without a block', () => {
      const plan = planFetched({ network: 'ethereum-mainnet', tx, fetched_at: 1 });
      if (plan.kind !== 'store') throw new Error(`expected store, got ${plan.kind}`);
      expect(plan.network.network).to.equal('ethereum-mainnet');
      expect(plan.issues).to.deep.equal([]);
      expect(plan.blocks).to.have.length(1);
      // No block row and no reorg decision from one transaction; the record keeps its own block fields.
      expect(plan.blocks[0].block).to.deep.equal({ height: null, hash: null, parent_hash: null, time: null });
      expect(plan.blocks[0].transactions).to.deep.equal([tx]);
      expect(plan.blocks[0].transactions[0].block_hash).to.equal(evm.block.hash);
    });

    it('dead-letters an unknown network and a record of another chain than its network', () => {
      expect(planFetched({ network: 'dogecoin-mainnet', tx, fetched_at: 1 })).to.include({ kind: 'dead', code: 'UNKNOWN_NETWORK' });
      expect(planFetched({ network: 'bsc-mainnet', tx, fetched_at: 1 })).to.include({ kind: 'dead', code: 'NON_RETRYABLE', network: 'bsc-mainnet' });
    });
  });

  describe('chain.tx messages', () => {
    const parsed = parseFixture('evm', evm, networkByName('ethereum-mainnet')!);
    const stored: StoredTx[] = parsed.transactions.slice(0, 3).map((tx, i) => ({ id: String(100 + i), network: 'ethereum-mainnet', is_reorg_resend: i === 1, orphaned: false, tx }));
    const orphaned: StoredTx[] = [{ id: '7', network: 'ethereum-mainnet', is_reorg_resend: false, orphaned: true, tx: parsed.transactions[5] }];

    it('one message per changed transaction, then the orphaned ones, keyed chain_type:chain_id:tx_hash', () => {
      const messages = blockMessages({ changed: stored, orphaned, previous: new Map() });
      expect(messages.map((m) => TOPICS.chainTx.key(m))).to.deep.equal([...stored, ...orphaned].map((s) => `ethereum:1:${s.tx.tx_hash}`));
      expect(messages[1].value).to.deep.equal({ id: '101', network: 'ethereum-mainnet', is_reorg_resend: true, orphaned: false, tx: stored[1].tx });
      expect(messages[3].value).to.include({ id: '7', orphaned: true });
      expect(chainTxKey(parsed.transactions[0])).to.equal(`ethereum:1:${parsed.transactions[0].tx_hash}`);
      const validate = loadContracts();
      for (const m of messages) expect(validate.validate('kafka/chain.tx.v1', m.value)).to.deep.equal({ ok: true });
    });

    it('a merge that kept status, block and flags names the parties of the record as it was; any other change does not', () => {
      const [first] = stored;
      const before = { ...first.tx, internal_transactions: [] };
      const kept = blockMessages({ changed: [first], orphaned: [], previous: new Map([[first.id, { tx: before, is_reorg_resend: false, orphaned: false }]]) });
      // The parties of the raw transaction: its sender and receiver (lowercase hex).
      const raw = evm.block.transactions[0];
      expect(kept[0].value.earlier_parties).to.include.members([raw.from.toLowerCase(), raw.to.toLowerCase()]);
      expect(loadContracts().validate('kafka/chain.tx.v1', kept[0].value)).to.deep.equal({ ok: true });
      const statusStep = blockMessages({ changed: [first], orphaned: [], previous: new Map([[first.id, { tx: { ...before, tx_status: 'pending' as const }, is_reorg_resend: false, orphaned: false }]]) });
      expect(statusStep[0].value).to.not.have.property('earlier_parties');
      const moved = blockMessages({ changed: [first], orphaned: [], previous: new Map([[first.id, { tx: before, is_reorg_resend: false, orphaned: true }]]) });
      expect(moved[0].value).to.not.have.property('earlier_parties');
    });

    it('a delivery is named by its raw record: a replay of the record has the same name, another record another', () => {
      const record = { topic: 'chain.raw.v1', partition: 2, offset: '17' };
      expect(deliverySource(record)).to.equal(deliverySource({ ...record }));
      expect(deliverySource(record)).to.not.equal(deliverySource({ ...record, offset: '18' }));
      expect(deliverySource(record)).to.not.equal(deliverySource({ ...record, partition: 1 }));
    });

    it('real messages of a block fit chain.tx.v1 whole: one request part, nothing too large', () => {
      const messages = blockMessages({ changed: stored, orphaned: [], previous: new Map() });
      const sizes = messages.map((m) => recordBytes({ key: TOPICS.chainTx.key(m), value: JSON.stringify(m.value) }));
      const { parts, tooLarge } = splitIntoParts(sizes, topicBudget(TOPICS.chainTx.maxMessageBytes), 1000);
      expect(parts).to.deep.equal([[0, 1, 2]]);
      expect(tooLarge).to.deep.equal([]);
    });

    it('names what a stored block was', () => {
      expect(blockOutcome({ replacedBlocks: ['0xa'], inserted: 3 })).to.equal('reorg');
      expect(blockOutcome({ replacedBlocks: [], inserted: 3 })).to.equal('new');
      expect(blockOutcome({ replacedBlocks: [], inserted: 0 })).to.equal('known');
    });
  });
});
