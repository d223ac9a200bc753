import { expect } from 'chai';
import { type Random, collectSlots, deepClone, mutationOperators, pick, readFixtureJson, seededRandom } from '@chainpipe/testing';
import { parseBitcoinPayload } from '../src/bitcoin';
import type { ParseResult } from '../src/types';
import { blockbook50001 } from './bitcoin-blockbook.test';
import { BTC_CTX, block50001, prevouts50001, withPrevouts } from './bitcoin-core.test';
import { expectWellFormedParseResult } from './support/parse-result';

type Json = any;

const WRONG_VALUES: unknown[] = [
  null, undefined, true, 0, -1, 1.5, NaN, Infinity, 1e308, -1e308, 2 ** 64, '', 'x', '-5', '0x1a',
  '1'.repeat(400), '50.000000001', [], [null], {}, { value: 'x' },
];

/** Keys the parser actually reads: mutating these exercises its narrowing, not just the hex blobs. */
const SEMANTIC_KEYS = new Set([
  'tx', 'txs', 'txid', 'vin', 'vout', 'value', 'n', 'coinbase', 'scriptPubKey', 'address', 'addresses',
  'isAddress', 'prevout', 'fee', 'fees', 'version', 'hash', 'height', 'time', 'blockhash', 'blocktime',
  'previousblockhash', 'previousBlockHash', 'txCount', 'nTx', 'blockHeight', 'blockTime', 'blockHash',
]);

const ops = mutationOperators(WRONG_VALUES);

function mutate(source: Json, rand: Random): unknown {
  const kind = Math.floor(rand() * 6);
  if (kind === 0) {
    // Truncated delivery: cut the JSON text; keep the broken text itself when it no longer parses.
    const text = JSON.stringify(source);
    const cut = text.slice(0, Math.floor(rand() * text.length));
    try {
      return JSON.parse(cut);
    } catch {
      return cut;
    }
  }
  const copy = deepClone(source);
  const all = collectSlots(copy);
  const semantic = all.filter((slot) => SEMANTIC_KEYS.has(String(slot.key)));
  const slots = kind === 5 && semantic.length > 0 ? semantic : all;
  for (let n = 1 + Math.floor(rand() * 3); n > 0 && slots.length > 0; n--) {
    const slot = pick(rand, slots);
    if (kind === 1) ops.deleteKey(slot);
    else if (kind === 4 && Array.isArray(slot.parent[slot.key])) ops.truncateArray(slot, rand);
    else ops.wrongValue(slot, rand);
  }
  return copy;
}

function assertWellFormed(result: ParseResult, label: string): void {
  expectWellFormedParseResult(result, {
    label,
    txHash: /^[0-9a-f]{64}$/,
    amounts: ['amount', 'tx_fee'],
    entryAmounts: ['from_details', 'to_details'],
  });
  for (const block of result.blocks) {
    for (const tx of block.transactions) {
      for (const n of [tx.height, tx.tx_time]) if (n !== null) expect(Number.isSafeInteger(n), label).to.equal(true);
    }
  }
}

describe('bitcoin parser: fuzz (seeded mutations of real fixtures)', () => {
  const sources: Array<[string, Json]> = [
    ['core-50001-v2', block50001()],
    ['core-50001-v3', withPrevouts(block50001(), prevouts50001())],
    ['core-766390', readFixtureJson('bitcoin/btc-mainnet-766390.getblock_verbosity2.json')],
    ['core-766393', readFixtureJson('bitcoin/btc-mainnet-766393.getblock_verbosity2.json')],
    ['core-tx-prevout-6f9e6473', readFixtureJson('bitcoin/btc-mainnet.getrawtransaction_verbosity2_prevout_6f9e6473.json')],
    ['blockbook-50001', blockbook50001()],
  ];

  for (const [name, source] of sources) {
    it(`${name}: 80 mutations never throw and always return a well-formed result`, () => {
      const rand = seededRandom(name.length * 7919 + name.charCodeAt(name.length - 1));
      const baseline = JSON.stringify(parseBitcoinPayload([source], BTC_CTX));
      let changed = 0;
      for (let i = 0; i < 80; i++) {
        const item = mutate(source, rand);
        const wrapped = rand() < 0.2 ? { jsonrpc: '2.0', id: i, result: item } : item;
        let result: ParseResult | undefined;
        expect(() => {
          result = parseBitcoinPayload([wrapped, source], BTC_CTX);
        }, `${name} #${i}`).not.to.throw();
        assertWellFormed(result as ParseResult, `${name} #${i}`);
        // The intact second block always parses completely, whatever happened to the first.
        const intact = (result as ParseResult).blocks.at(-1);
        expect(intact?.transactions.length, `${name} #${i}`).to.equal((source.tx ?? source.txs ?? [source]).length);
        if (JSON.stringify(parseBitcoinPayload([wrapped], BTC_CTX)) !== baseline) changed++;
      }
      // Guard against a vacuous fuzz whose mutations never reach anything the parser reads.
      expect(changed, `${name}: mutations that changed the result`).to.be.above(30);
    });
  }

  it('survives hostile top-level values and contexts', () => {
    const hostile: unknown[] = [undefined, null, 'x', 42, {}, { txs: 'x' }, { tx: [1, 'a', null] }, { vin: null, vout: [] }];
    for (const payload of [hostile, null, undefined, 'x', {}] as unknown[]) {
      expect(() => assertWellFormed(parseBitcoinPayload(payload as unknown[], BTC_CTX), String(payload))).not.to.throw();
    }
    const result = parseBitcoinPayload([block50001()], null as never);
    assertWellFormed(result, 'null ctx');
    expect(result.issues).to.have.length(1);
  });
});
