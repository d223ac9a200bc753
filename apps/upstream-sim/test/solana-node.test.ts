import { expect } from 'chai';
import { readFixtureJson, solanaWireTransaction } from '@chainpipe/testing';
import { buildSolanaChain, solanaBlockSlot, solanaNode } from '../src/chain-nodes/solana-node';
import { call, fixtureDocs, nodeOf, result } from './helpers';

const PARSED = 'solana/sol-devnet-blockheight139015678.getBlock_jsonParsed_full.json';
const RAW = 'solana/sol-devnet-blockheight139015678.getBlock_json_full.json';

describe('Solana chain node from fixtures', () => {
  const devnet = nodeOf('solana-devnet').rpc;
  const mainnet = nodeOf('solana-mainnet').rpc;
  const parsed = readFixtureJson(PARSED).result;
  const raw = readFixtureJson(RAW).result;
  // getBlock results carry no slot; the devnet block is placed right after its parent.
  const slot = parsed.parentSlot + 1;

  it('serves the devnet getBlock at parentSlot + 1, in the encoding asked for, exactly as fetched', () => {
    expect(result(devnet, 'getBlock', [slot, { encoding: 'jsonParsed' }])).to.deep.equal(parsed);
    expect(result(devnet, 'getBlock', [slot, { encoding: 'json' }])).to.deep.equal(raw);
    expect(result(devnet, 'getBlock', [slot])).to.deep.equal(raw);
    expect(result(devnet, 'getBlock', [slot, 'jsonParsed'])).to.deep.equal(parsed);
  });

  it('adds version "legacy" to every transaction when maxSupportedTransactionVersion is set', () => {
    const block = result(devnet, 'getBlock', [slot, { encoding: 'jsonParsed', maxSupportedTransactionVersion: 0 }]);
    expect(block.transactions).to.deep.equal(parsed.transactions.map((t: object) => ({ ...t, version: 'legacy' })));
    expect({ ...block, transactions: parsed.transactions }).to.deep.equal(parsed);
  });

  it('honours transactionDetails and rewards', () => {
    const sigs = result(devnet, 'getBlock', [slot, { encoding: 'json', transactionDetails: 'signatures', rewards: false }]);
    expect(sigs.signatures).to.deep.equal(raw.transactions.map((t: any) => t.transaction.signatures[0]));
    expect(sigs).to.not.have.property('transactions');
    expect(sigs).to.not.have.property('rewards');
    expect(sigs.blockhash).to.equal(raw.blockhash);
    const none = result(devnet, 'getBlock', [slot, { transactionDetails: 'none' }]);
    expect(Object.keys(none).sort()).to.deep.equal(Object.keys(raw).filter((k) => k !== 'transactions').sort());
    expect(call(devnet, 'getBlock', [slot, { transactionDetails: 'accounts' }]).error?.code).to.equal(-32602);
  });

  it('answers slots without a block with the node errors for cleaned-up, skipped and future slots', () => {
    const mainSlots = fixtureDocs()
      .filter((d) => d.path.startsWith('solana/sol-mainnet-') && d.path.includes('.getBlock_'))
      .map((d) => Number(/-slot(\d+)\./.exec(d.path)![1]));
    const [low, high] = [Math.min(...mainSlots), Math.max(...mainSlots)];
    expect(call(mainnet, 'getBlock', [low - 1]).error?.code).to.equal(-32001);
    expect(call(mainnet, 'getBlock', [low + 1]).error).to.deep.equal({ code: -32007, message: `Slot ${low + 1} was skipped, or missing due to ledger jump to recent snapshot` });
    expect(call(mainnet, 'getBlock', [high + 1]).error).to.deep.equal({ code: -32004, message: `Block not available for slot ${high + 1}` });
    for (const bad of ['12', -1, 1.5, null]) expect(call(mainnet, 'getBlock', [bad]).error?.code, String(bad)).to.equal(-32602);
    expect(call(mainnet, 'getBlock', []).error?.code).to.equal(-32602);
    expect(call(mainnet, 'getBlock', [high, { encoding: 'base64' }]).error?.code).to.equal(-32602);
    expect(call(mainnet, 'getBlock', [high, { commitment: 'processed' }]).error?.code).to.equal(-32602);
  });

  it('reports the highest getBlock fixture as slot, its height and blockhash', () => {
    const truncated = readFixtureJson('solana/sol-mainnet-slot241043141.getBlock_jsonParsed_TRUNCATED-1tx.json');
    const older = readFixtureJson('solana/sol-mainnet-slot100000000.getBlock_jsonParsed_TRUNCATED-10tx.json');
    expect(truncated.blockHeight).to.be.greaterThan(older.blockHeight);
    expect(result(mainnet, 'getSlot')).to.equal(241043141);
    expect(result(mainnet, 'getBlockHeight')).to.equal(truncated.blockHeight);
    expect(result(mainnet, 'getLatestBlockhash')).to.deep.equal({ context: { slot: 241043141 }, value: { blockhash: truncated.blockhash, lastValidBlockHeight: truncated.blockHeight + 150 } });
    expect(result(mainnet, 'getHealth')).to.equal('ok');
    expect(result(devnet, 'getSlot')).to.equal(slot);
  });

  it('returns getTransaction fixtures exactly, and without `version` when no max version is asked for', () => {
    const fixture = readFixtureJson('solana/sol-mainnet-slot419685246.getTransaction_jsonParsed_usdc-transferChecked_4LXpF3MC.json').result;
    const sig = fixture.transaction.signatures[0];
    expect(result(mainnet, 'getTransaction', [sig, { encoding: 'jsonParsed', maxSupportedTransactionVersion: 0 }])).to.deep.equal(fixture);
    const { version: _v, ...withoutVersion } = fixture;
    expect(result(mainnet, 'getTransaction', [sig, 'jsonParsed'])).to.deep.equal(withoutVersion);
    // The batch-envelope fixture is unwrapped too.
    const batched = readFixtureJson('solana/sol-mainnet-slot139493615.getTransaction_jsonParsed_21w7wVXW.json')[0].result;
    expect(result(mainnet, 'getTransaction', [batched.transaction.signatures[0], { encoding: 'jsonParsed' }])).to.deep.equal(batched);
  });

  it('answers getTransaction for a transaction of a block fixture, built from the block', () => {
    const i = 3;
    const sig = raw.transactions[i].transaction.signatures[0];
    expect(result(devnet, 'getTransaction', [sig, { encoding: 'json' }])).to.deep.equal({ blockTime: raw.blockTime, meta: raw.transactions[i].meta, slot, transaction: raw.transactions[i].transaction });
    expect(result(devnet, 'getTransaction', [sig, { encoding: 'jsonParsed', maxSupportedTransactionVersion: 0 }])).to.deep.equal({
      blockTime: parsed.blockTime,
      meta: parsed.transactions[i].meta,
      slot,
      transaction: parsed.transactions[i].transaction,
      version: 'legacy',
    });
    expect(result(devnet, 'getTransaction', ['1'.repeat(87)])).to.equal(null);
    expect(call(devnet, 'getTransaction', ['not-a-signature']).error?.code).to.equal(-32602);
    expect(call(devnet, 'getTransaction', [42]).error?.code).to.equal(-32602);
  });

  it('serves base64 and base58 from the json fixture: the signed wire bytes, meta still JSON', () => {
    // Expected bytes come from the hand-written serializer of libs/testing, which checks every
    // signature of the real transaction over the message it wrote: only the signed bytes pass.
    for (const encoding of ['base64', 'base58'] as const) {
      const block = result(devnet, 'getBlock', [slot, { encoding, maxSupportedTransactionVersion: 0 }]);
      expect({ ...block, transactions: raw.transactions }).to.deep.equal(raw);
      expect(block.transactions).to.have.length(25);
      block.transactions.forEach((t: any, i: number) => {
        const want = raw.transactions[i];
        expect(t, `${encoding} tx ${i}`).to.deep.equal({ meta: want.meta, transaction: [solanaWireTransaction(want, encoding), encoding], version: 'legacy' });
      });
      const i = 8;
      const want = raw.transactions[i];
      expect(result(devnet, 'getTransaction', [want.transaction.signatures[0], { encoding }])).to.deep.equal({
        blockTime: raw.blockTime,
        meta: want.meta,
        slot,
        transaction: [solanaWireTransaction(want, encoding), encoding],
      });
    }
    // The bare-string form of the request's config is accepted as for the other encodings.
    const sig = raw.transactions[0].transaction.signatures[0];
    expect(result(devnet, 'getTransaction', [sig, 'base64']).transaction[1]).to.equal('base64');
  });

  it('refuses a binary encoding where only a jsonParsed fixture exists, rather than inventing bytes', () => {
    const tx = readFixtureJson('solana/sol-mainnet-slot399683256.getTransaction_jsonParsed_sol-transfer_2kHbPUGz.json').result;
    const err = call(mainnet, 'getTransaction', [tx.transaction.signatures[0], { encoding: 'base64' }]).error;
    expect(err?.code).to.equal(-32602);
    expect(err?.message).to.match(/only where a json-encoded fixture/);
    expect(call(devnet, 'getTransaction', [tx.transaction.signatures[0], { encoding: 'base85' }]).error?.code).to.equal(-32602);
  });

  it('reports signature statuses: finalized with the transaction error, null when unknown', () => {
    const failed = readFixtureJson('solana/sol-mainnet-slot241043141.getBlock_jsonParsed_TRUNCATED-1tx.json').transactions[0];
    const ok = readFixtureJson('solana/sol-mainnet-slot399683256.getTransaction_jsonParsed_sol-transfer_2kHbPUGz.json').result;
    expect(failed.meta.err).to.not.equal(null);
    const statuses = result(mainnet, 'getSignatureStatuses', [[failed.transaction.signatures[0], ok.transaction.signatures[0], '1'.repeat(88)]]);
    expect(statuses.context).to.deep.equal({ slot: 241043141 });
    expect(statuses.value).to.deep.equal([
      { slot: 241043141, confirmations: null, err: failed.meta.err, status: { Err: failed.meta.err }, confirmationStatus: 'finalized' },
      { slot: ok.slot, confirmations: null, err: null, status: { Ok: null }, confirmationStatus: 'finalized' },
      null,
    ]);
    expect(call(mainnet, 'getSignatureStatuses', ['abc']).error?.code).to.equal(-32602);
  });

  it('refuses a versioned transaction to a client that did not ask for versions (-32015)', () => {
    const tx = readFixtureJson('solana/sol-mainnet-slot399683256.getTransaction_jsonParsed_sol-transfer_2kHbPUGz.json').result;
    const v0 = { ...tx, version: 0 };
    const node = solanaNode(buildSolanaChain([{ kind: 'tx', encoding: 'jsonParsed', value: v0, slot: null, source: 'synthetic' }]).chain);
    const sig = tx.transaction.signatures[0];
    expect(call(node, 'getTransaction', [sig, 'jsonParsed']).error?.code).to.equal(-32015);
    expect(result(node, 'getTransaction', [sig, { encoding: 'jsonParsed', maxSupportedTransactionVersion: 0 }])).to.deep.equal(v0);
  });

  it('takes the slot of a getBlock from the file name, else from parentSlot + 1', () => {
    expect(solanaBlockSlot('sol-mainnet-slot100000000.getBlock_jsonParsed_TRUNCATED-10tx.json', { parentSlot: 99999999 })).to.equal(100000000);
    expect(solanaBlockSlot('sol-devnet-blockheight139015678.getBlock_json_full.json', { parentSlot: 147078734 })).to.equal(147078735);
    expect(solanaBlockSlot('x.getBlock_json.json', {})).to.equal(null);
  });
});
