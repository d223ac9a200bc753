import { type Random, collectSlots, deepClone, mutationOperators, pick, readFixtureJson, seededRandom } from '@chainpipe/testing';
import { expect } from 'chai';
import { parseEvmPayload } from '../src/evm';
import type { ChainContext, ParseResult } from '../src/types';
import { expectWellFormedParseResult } from './support/parse-result';

// Deterministic fuzzing: real fixtures, mutated by a seeded PRNG (truncated arrays and strings,
// deleted keys, values of the wrong type). The parser must never throw and must always return a
// well-formed ParseResult.

const CTX: ChainContext = { chainType: 'ethereum', chainId: 1, family: 'evm', nativeSymbol: 'ETH', nativeDecimals: 18 };

const f = (name: string): any => readFixtureJson(`evm/${name}`);
const result = (name: string): any => {
  const raw = f(name);
  return raw && 'jsonrpc' in raw ? raw.result : raw;
};

/** Each base is one `data` array (per-block elements) built from real fixtures. */
function bases(): Array<{ name: string; items: unknown[] }> {
  return [
    {
      name: '13998626 block+receipts+traces',
      items: [
        {
          block: result('eth-mainnet-13998626.block_fulltx.json'),
          receipts: result('eth-mainnet-13998626.receipts.json'),
          traces: result('eth-mainnet-13998626.debug_trace_callTracer.json'),
        },
      ],
    },
    {
      name: '483920 block+receipts envelopes',
      items: [{ block: f('eth-mainnet-483920.eth_getBlockByNumber_full.json'), receipts: f('eth-mainnet-483920.eth_getBlockReceipts.json') }],
    },
    { name: '483920 receipts only', items: [result('eth-mainnet-483920.eth_getBlockReceipts.json')] },
    {
      name: 'parity + geth traces',
      items: [
        f('eth-mainnet-1000000.trace_block.json'),
        f('eth-mainnet-1011973.trace_block.json'),
        result('eth-mainnet-508110.trace_block.json'),
        result('eth-mainnet-1000895.debug_traceBlockByNumber_callTracer.json').map((e: any, i: number) => ({
          txHash: i === 0 ? '0xa2f089480e6fd907e786a88d928ba20feeca2ca37ffa84c2d54bae42f5d989c9' : '0xc7fec96b2dd4cadaade2721dc9b5386a39ab00e96e7c1060e441f273801b39de',
          result: e.result,
        })),
      ],
    },
    {
      name: 'bsc block + receipt envelopes',
      items: [
        {
          block: f('bsc-testnet-11832497.eth_getBlockByHash_full.json'),
          receipts: [
            f('bsc-testnet-11832497.eth_getTransactionReceipt_bep20-transfer_0x4c4c66c0.json'),
            f('bsc-testnet-11832497.eth_getTransactionReceipt_validator-deposit_0xac14bda8.json'),
          ],
        },
      ],
    },
    {
      name: 'l2 singles',
      items: [
        { block: result('arbitrum-one-18413839.block_fulltx.json'), receipts: [result('arbitrum-one-18413839.eth_getTransactionReceipt_0xbb26d13b.json')] },
        result('op-mainnet-127446283.eth_getTransactionByHash_l1info-deposit_0xbc9329af.json'),
        [result('op-mainnet-114290569.eth_getTransactionReceipt_l1info-deposit_0xb7c74afd.json')],
        result('polygon-pos-34155965.bor_state-sync_receipt_0xd9273904.json'),
      ],
    },
    {
      name: 'base-goerli block+receipts+traces',
      items: [
        {
          block: result('base-goerli-1041847.block_fulltx.json'),
          receipts: result('base-goerli-1041847.receipts.json'),
          traces: result('base-goerli-1041847.debug_trace_callTracer.json'),
        },
      ],
    },
  ];
}

const WRONG_VALUES: unknown[] = [
  null,
  0,
  -1,
  1.5,
  1e300,
  Number.MAX_SAFE_INTEGER + 2,
  true,
  '',
  'garbage',
  '0x',
  '0xzz',
  '0x' + 'f'.repeat(200),
  '-0x1',
  {},
  [],
  [null],
  { jsonrpc: '2.0', error: { message: 'boom' } },
  { result: null },
];

const ops = mutationOperators(WRONG_VALUES);

function mutate(root: any, rnd: Random): void {
  const all = collectSlots(root, 'stack');
  if (all.length === 0) return;
  const slot = pick(rnd, all);
  const kind = Math.floor(rnd() * 4);
  if (kind === 0) return ops.deleteKey(slot);
  if (kind === 1) return ops.wrongValue(slot, rnd);
  if (kind === 2 && ops.truncate(slot, rnd)) return;
  // Otherwise a string changes case and gains a character; anything else gets a wrong value.
  const value = slot.parent[slot.key];
  if (typeof value === 'string') slot.parent[slot.key] = value.toUpperCase() + 'x';
  else ops.wrongValue(slot, rnd);
}

function assertWellFormed(res: ParseResult, label: string): void {
  expectWellFormedParseResult(res, {
    label,
    amounts: ['amount', 'tx_fee', 'gas_limit', 'gas_used', 'gas_price', 'max_fee_per_gas', 'max_priority_fee_per_gas', 'nonce'],
    entryAmounts: ['token_transfers', 'internal_transactions'],
  });
}

describe('parseEvmPayload — fuzz', () => {
  it('never throws and always returns a well-formed result over 400 seeded mutations', function () {
    this.timeout(60000);
    const rnd = seededRandom(0xe7a1);
    const pristine = bases();
    let records = 0;
    let issues = 0;
    for (let i = 0; i < 400; i++) {
      const base = pristine[i % pristine.length];
      const items = deepClone(base.items);
      const rounds = 1 + Math.floor(rnd() * 5);
      for (let r = 0; r < rounds; r++) mutate(items, rnd);
      const label = `mutation ${i} of ${base.name}`;
      let res: ParseResult | undefined;
      expect(() => {
        res = parseEvmPayload(items, CTX);
      }, label).not.to.throw();
      assertWellFormed(res!, label);
      // Amounts are strings: the whole result must serialize, and identically on a second run.
      expect(JSON.stringify(parseEvmPayload(items, CTX)), label).to.equal(JSON.stringify(res));
      records += res!.blocks.reduce((n, b) => n + b.transactions.length, 0);
      issues += res!.issues.length;
    }
    // The mutations must leave most data parseable and still hit the error paths.
    expect(records).to.be.greaterThan(1000);
    expect(issues).to.be.greaterThan(0);
  });

  it('survives whole-element garbage', () => {
    const garbage: unknown[] = [undefined, null, 'x', 7, [], [[]], [null, 1], {}, { block: 1 }, { receipts: 'x' }, { traces: [1, 2] }, { transactions: 'x', number: '0x1', parentHash: 5 }];
    const res = parseEvmPayload(garbage, CTX);
    assertWellFormed(res, 'garbage');
    expect(res.issues.length).to.be.greaterThan(0);
    assertWellFormed(parseEvmPayload(null as unknown as unknown[], CTX), 'null payload');
  });
});
