import { networkByName, type NetworkInfo } from '@chainpipe/chains';
import { evmDatasetItems, readFixtureJson, streamerBody, tronBlockItem } from '@chainpipe/testing';
import { expect } from 'chai';
import { parseChainPayload } from '../src';
import { tokenTransfer } from '../src/record-base';
import { mergeInto, mergeRecords, recordChanged } from '../src/record-merge';
import type { NormalizedTx } from '../src/types';

type Json = any;

const ETH = networkByName('ethereum-mainnet')!;
const TRON = networkByName('tron-mainnet')!;

/** The records of one delivery (one element), parsed as chain-parser parses it; no issue allowed. */
function records(network: NetworkInfo, item: Json, dataset: string, start: number): NormalizedTx[] {
  const res = parseChainPayload(streamerBody(Array.isArray(item) ? item : [item], { network: network.network, dataset, start }), network);
  if (!res.ok) throw new Error(res.reason);
  expect(res.issues, dataset).to.deep.equal([]);
  return res.blocks.flatMap((b) => b.transactions);
}

/**
 * Every delivery's records folded with mergeInto, in the given order, by hash; checks on the way
 * that its `changed` is what a deep comparison says (the store writes and publishes by it).
 */
function fold(deliveries: NormalizedTx[][]): Map<string, NormalizedTx> {
  const out = new Map<string, NormalizedTx>();
  for (const d of deliveries) {
    for (const tx of d) {
      const prev = out.get(tx.tx_hash);
      if (!prev) {
        out.set(tx.tx_hash, tx);
        continue;
      }
      // The stored side comes back from jsonb: a JSON round trip, keys in another order.
      const stored = JSON.parse(JSON.stringify(prev));
      const { record, changed } = mergeInto(stored, tx);
      expect(changed, tx.tx_hash).to.equal(recordChanged(stored, record));
      expect(record).to.deep.equal(mergeRecords(prev, tx));
      out.set(tx.tx_hash, record);
    }
  }
  return out;
}

function permutations<T>(xs: T[]): T[][] {
  if (xs.length <= 1) return [xs];
  return xs.flatMap((x, i) => permutations([...xs.slice(0, i), ...xs.slice(i + 1)]).map((p) => [x, ...p]));
}

const byHash = (txs: NormalizedTx[]) => new Map(txs.map((t) => [t.tx_hash, t]));

describe('mergeRecords: deliveries of one block by different datasets', () => {
  for (const height of [13998626, 17053184] as const) {
    describe(`eth-mainnet ${height}: block, receipts, callTracer traces`, () => {
      const items = evmDatasetItems(height);
      const parts = {
        block: records(ETH, items.block, 'block', height),
        receipts: records(ETH, [items.receipts], 'receipts', height),
        traces: records(ETH, [items.traces], 'debug_traces', height),
      };
      const all = byHash(records(ETH, items.all, 'block_with_receipts_debug_trace', height));

      it('each dataset alone knows only its part of the records', () => {
        // Raw data: the block lists every transaction; receipts and traces one entry per transaction.
        expect(all.size).to.equal(items.block.transactions.length);
        for (const name of ['block', 'receipts', 'traces'] as const) expect(parts[name], name).to.have.length(all.size);
        // Only receipts give gas used; only traces the internal transfers; only the block the nonce.
        expect(parts.block.every((t) => t.gas_used === null && t.internal_transactions.length === 0 && t.token_transfers.length === 0)).to.equal(true);
        expect(parts.receipts.every((t) => t.nonce === null && t.internal_transactions.length === 0)).to.equal(true);
        expect(parts.traces.every((t) => t.block_hash === null && t.gas_used === null && t.token_transfers.length === 0)).to.equal(true);
      });

      it('every order of the three deliveries merges into the record of one delivery carrying all', () => {
        for (const order of permutations(['block', 'receipts', 'traces'] as const)) {
          const merged = fold(order.map((n) => parts[n]));
          expect(merged.size, order.join(',')).to.equal(all.size);
          for (const [hash, tx] of all) expect(merged.get(hash), `${order.join(' → ')}: ${hash}`).to.deep.equal(tx);
        }
      });

      it('two of the three merge into the record of one delivery carrying those two', () => {
        const pairs: Array<[keyof typeof parts, keyof typeof parts, Json]> = [
          ['block', 'receipts', { block: items.block, receipts: items.receipts }],
          ['block', 'traces', { block: items.block, traces: items.traces }],
          ['receipts', 'traces', { receipts: items.receipts, traces: items.traces }],
        ];
        for (const [x, y, composite] of pairs) {
          const expected = byHash(records(ETH, composite, 'composite', height));
          for (const order of [[x, y], [y, x]]) {
            const merged = fold(order.map((n) => parts[n]));
            for (const [hash, tx] of expected) expect(merged.get(hash), `${order.join(' → ')}: ${hash}`).to.deep.equal(tx);
          }
        }
      });

      it('is idempotent: merging a record with itself, or a merged record with any part again, changes nothing', () => {
        for (const tx of all.values()) {
          expect(recordChanged(tx, mergeRecords(tx, tx))).to.equal(false);
          expect(mergeInto(tx, tx).changed).to.equal(false);
          for (const name of ['block', 'receipts', 'traces'] as const) {
            const part = byHash(parts[name]).get(tx.tx_hash)!;
            expect(recordChanged(tx, mergeRecords(tx, part)), name).to.equal(false);
            expect(mergeInto(tx, part).changed, name).to.equal(false);
            expect(recordChanged(tx, mergeRecords(part, tx)), name).to.equal(false);
          }
        }
      });
    });
  }

  it('13998626: the traces add the four internal transfers of 0xb240b922…, kept whatever comes after', () => {
    const items = evmDatasetItems(13998626);
    const hash = '0xb240b922161bb0aeaa5ebe67e6cf77311092bd945b9582b8deba61e2ebdde74f';
    // Raw trace of that transaction (position 2): four nested CALLs carry value, none reverted:
    // WETH 0xc02a… → 0xdef1c0de… 2838590356527993236, 0xdef1c0de… → 0x74de… 2838590356527993236,
    // 0x74de… → 0xf326… 24837665619619940, 0x74de… → 0xc409… 2813752690908373296.
    const expected = [
      ['0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2', '0xdef1c0ded9bec7f1a1670819833240f027b25eff', '2838590356527993236'],
      ['0xdef1c0ded9bec7f1a1670819833240f027b25eff', '0x74de5d4fcbf63e00296fd95d33236b9794016631', '2838590356527993236'],
      ['0x74de5d4fcbf63e00296fd95d33236b9794016631', '0xf326e4de8f66a0bdc0970b79e0924e33c79f1915', '24837665619619940'],
      ['0x74de5d4fcbf63e00296fd95d33236b9794016631', '0xc409134827440024347e27b2826dfd3d42a2967b', '2813752690908373296'],
    ];
    const block = byHash(records(ETH, items.block, 'block', 13998626)).get(hash)!;
    const receipts = byHash(records(ETH, [items.receipts], 'receipts', 13998626)).get(hash)!;
    const traces = byHash(records(ETH, [items.traces], 'debug_traces', 13998626)).get(hash)!;
    const merged = mergeRecords(mergeRecords(receipts, traces), block);
    expect(merged.internal_transactions.map((i) => [i.from_address, i.to_address, i.amount])).to.have.deep.members(expected);
    // Block and receipts alone have no internal transfer of it.
    expect(mergeRecords(block, receipts).internal_transactions).to.deep.equal([]);
    // A later receipts-only delivery keeps them.
    expect(mergeRecords(merged, receipts).internal_transactions).to.have.length(4);
    expect(merged.tx_status).to.equal('success'); // receipt status 0x1
    expect(merged.gas_used).to.equal(BigInt(items.receipts[2].gasUsed).toString());
    expect(merged.nonce).to.equal(BigInt(items.block.transactions[2].nonce).toString());
  });

  describe('the two trace formats of one block (trace_block and callTracer) merge into either one', () => {
    for (const height of [1000000, 1000690, 1000895, 1011973]) {
      it(`eth-mainnet ${height}`, () => {
        const parity: Json[] = readFixtureJson(`evm/eth-mainnet-${height}.trace_block.json`).result;
        const frames: Json[] = readFixtureJson(`evm/eth-mainnet-${height}.debug_traceBlockByNumber_callTracer.json`).result;
        // The old geth results carry no txHash: each gets the hash trace_block gives its position.
        const hashAt = new Map(parity.filter((t) => t.transactionHash).map((t) => [t.transactionPosition, t.transactionHash]));
        const geth = frames.map((f, i) => ({ txHash: hashAt.get(i), result: f.result }));
        const fromParity = byHash(records(ETH, [parity], 'trace_blocks', height));
        const fromGeth = byHash(records(ETH, [geth], 'debug_traces', height));
        expect(fromGeth.size).to.equal(fromParity.size);
        for (const [hash, p] of fromParity) {
          const g = fromGeth.get(hash)!;
          const merged = mergeRecords(p, g);
          expect(mergeRecords(g, p), hash).to.deep.equal(merged);
          // Every internal transfer either format found is in the merge, once; trace_block's
          // numbering is geth's (depth-first pre-order), so a transfer both found is one entry.
          const key = (i: Json) => JSON.stringify([i.from_address, i.to_address, i.amount, i.instr_index]);
          const union = new Set([...p.internal_transactions, ...g.internal_transactions].map(key));
          expect(merged.internal_transactions.map(key)).to.have.members([...union]);
          expect(merged.block_hash).to.equal(parity[0].blockHash);
        }
        if (height === 1011973) {
          // Old geth's SELFDESTRUCT frame has no from/to/value; Parity's `suicide` moves
          // balance 0xb1a2bc2ec50000 = 0.05 ETH to refundAddress: only trace_block knows it.
          const [p] = fromParity.values();
          const g = fromGeth.get(p.tx_hash)!;
          expect(g.internal_transactions).to.deep.equal([]);
          expect(mergeRecords(g, p).internal_transactions.map((i) => [i.instruction, i.amount])).to.deep.equal([['selfdestruct', '50000000000000000']]);
        }
      });
    }
  });

  describe('Tron 60836289 with and without the transaction info of 661f1df8…', () => {
    const raw: Json = tronBlockItem();
    const info: Json = readFixtureJson('tron/tron-mainnet-60836289.wallet_gettransactioninfobyid_661f1df8_visible.json');
    const height = raw.block_header.raw_data.number;
    const bare = records(TRON, raw, 'block', height);
    const withInfo = records(TRON, [raw, info], 'block', height);

    it('either order gives the record of the block with its info', () => {
      const expected = byHash(withInfo);
      for (const order of [[bare, withInfo], [withInfo, bare]]) {
        const merged = fold(order);
        expect(merged.size).to.equal(raw.transactions.length);
        for (const [hash, tx] of expected) expect(merged.get(hash), hash).to.deep.equal(tx);
      }
    });

    it('the transfer read from call data gives way to the one read from the log', () => {
      const id = info.id;
      const guessed = byHash(bare).get(id)!;
      // Without the info: transfer(0xdc2c…, 0x8e277354) decoded from the call data, no log index.
      expect(guessed.token_transfers.map((t) => t.log_index)).to.deep.equal([null]);
      const merged = mergeRecords(guessed, byHash(withInfo).get(id)!);
      // The info's one log: Transfer of 0x8e277354 = 2384950100 on TR7NHq… (USDT), log 0; fee 27600900.
      expect(merged.token_transfers.map((t) => [t.token_contract_address, t.amount, t.log_index])).to.deep.equal([['TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t', '2384950100', 0]]);
      expect(merged.tx_fee).to.equal('27600900');
      expect(merged.gas_used).to.equal('64895');
    });
  });

  describe('conflicts: more information wins, the same in any order', () => {
    const base = records(ETH, evmDatasetItems(13998626).block, 'block', 13998626)[0];
    const withStatus = (s: NormalizedTx['tx_status']): NormalizedTx => ({ ...base, tx_status: s });

    it('a stated failure beats a success assumed for lack of a receipt; a final status beats pending', () => {
      expect(mergeRecords(withStatus('success'), withStatus('failed')).tx_status).to.equal('failed');
      expect(mergeRecords(withStatus('failed'), withStatus('success')).tx_status).to.equal('failed');
      expect(mergeRecords(withStatus('pending'), withStatus('success')).tx_status).to.equal('success');
      expect(mergeRecords(withStatus(null), withStatus('pending')).tx_status).to.equal('pending');
    });

    it('transfer_type: token while tokens move, else the stronger of the two', () => {
      const token = { ...base, transfer_type: 'token' as const, token_transfers: [{ ...tokenEntry(), log_index: 3 }] };
      expect(mergeRecords({ ...base, transfer_type: 'native' }, token).transfer_type).to.equal('token');
      expect(mergeRecords(token, { ...base, transfer_type: 'contract_call' }).transfer_type).to.equal('token');
      expect(mergeRecords({ ...base, transfer_type: 'contract_call' }, { ...base, transfer_type: 'contract_creation' }).transfer_type).to.equal('contract_creation');
      expect(mergeRecords({ ...base, transfer_type: 'system' }, { ...base, transfer_type: 'native' }).transfer_type).to.equal('system');
      expect(mergeRecords({ ...base, transfer_type: null }, { ...base, transfer_type: 'native' }).transfer_type).to.equal('native');
    });

    it('two stated values of another field resolve the same whichever record came first', () => {
      const x = { ...base, gas_price: '100' };
      const y = { ...base, gas_price: '99' };
      expect(mergeRecords(x, y).gas_price).to.equal(mergeRecords(y, x).gas_price);
    });

    it('refuses records of different transactions', () => {
      expect(() => mergeRecords(base, { ...base, tx_hash: '0x00' })).to.throw(TypeError);
    });
  });
});

function tokenEntry() {
  return tokenTransfer({
    from_address: '0x1111111111111111111111111111111111111111',
    to_address: '0x2222222222222222222222222222222222222222',
    token_contract_address: '0x3333333333333333333333333333333333333333',
    amount: '5',
    standard: 'erc20',
    log_index: null,
  });
}
