import { expect } from 'chai';
import { readFixtureJson } from '@chainpipe/testing';
import { parseBitcoinPayload } from '../src/bitcoin';
import type { ParseResult } from '../src/types';
import { blockbook50001 } from './bitcoin-blockbook.test';
import { BTC_CTX, block50001, prevouts50001, withPrevouts } from './bitcoin-core.test';

type Json = any;

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WRONG_VALUES: unknown[] = [
  null, undefined, true, 0, -1, 1.5, NaN, Infinity, 1e308, -1e308, 2 ** 64, '', 'x', '-5', '0x1a',
  '1'.repeat(400), '50.000000001', [], [null], {}, { value: 'x' },
];

/** Every container (object or array) in the tree with the keys it holds. */
function containers(root: Json): Array<{ node: Json; key: string | number }> {
  const out: Array<{ node: Json; key: string | number }> = [];
  const walk = (node: Json) => {
    if (Array.isArray(node)) node.forEach((v, i) => (out.push({ node, key: i }), walk(v)));
    else if (node && typeof node === 'object') {
      for (const k of Object.keys(node)) {
        out.push({ node, key: k });
        walk(node[k]);
      }
    }
  };
  walk(root);
  return out;
}

/** Keys the parser actually reads: mutating these exercises its narrowing, not just the hex blobs. */
const SEMANTIC_KEYS = new Set([
  'tx', 'txs', 'txid', 'vin', 'vout', 'value', 'n', 'coinbase', 'scriptPubKey', 'address', 'addresses',
  'isAddress', 'prevout', 'fee', 'fees', 'version', 'hash', 'height', 'time', 'blockhash', 'blocktime',
  'previousblockhash', 'previousBlockHash', 'txCount', 'nTx', 'blockHeight', 'blockTime', 'blockHash',
]);

function mutate(source: Json, rand: () => number): unknown {
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
  const copy = JSON.parse(JSON.stringify(source));
  const all = containers(copy);
  const semantic = all.filter((slot) => SEMANTIC_KEYS.has(String(slot.key)));
  const slots = kind === 5 && semantic.length > 0 ? semantic : all;
  for (let n = 1 + Math.floor(rand() * 3); n > 0 && slots.length > 0; n--) {
    const { node, key } = slots[Math.floor(rand() * slots.length)];
    if (kind === 1) {
      if (Array.isArray(node)) node.splice(Number(key), 1);
      else delete node[key];
    } else if (kind === 2 || kind === 3 || kind === 5) {
      node[key] = WRONG_VALUES[Math.floor(rand() * WRONG_VALUES.length)];
    } else if (Array.isArray(node[key])) {
      node[key].length = Math.floor(rand() * node[key].length);
    } else {
      node[key] = WRONG_VALUES[Math.floor(rand() * WRONG_VALUES.length)];
    }
  }
  return copy;
}

const DIGITS = /^\d+$/;

function assertWellFormed(result: ParseResult, label: string): void {
  expect(result, label).to.be.an('object');
  expect(result.blocks, label).to.be.an('array');
  expect(result.issues, label).to.be.an('array');
  for (const issue of result.issues) {
    expect(issue.block_index, label).to.be.a('number');
    expect(issue.reason, label).to.be.a('string');
  }
  for (const block of result.blocks) {
    expect(block.block, label).to.be.an('object');
    expect(block.transactions, label).to.be.an('array');
    for (const tx of block.transactions) {
      expect(tx.tx_hash, label).to.be.a('string').and.match(/^[0-9a-f]{64}$/);
      for (const amount of [tx.amount, tx.tx_fee]) if (amount !== null) expect(amount, label).to.match(DIGITS);
      expect(tx.from_details, label).to.be.an('array');
      expect(tx.to_details, label).to.be.an('array');
      for (const d of [...tx.from_details, ...tx.to_details]) if (d.amount !== null) expect(d.amount, label).to.match(DIGITS);
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
      const rand = mulberry32(name.length * 7919 + name.charCodeAt(name.length - 1));
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
