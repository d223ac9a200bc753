/**
 * `npm run bench -- publish`: chain-parser's contract checks per chain.tx.v1 message, on real
 * blocks, without a broker (the producer's encode is where the publish-side check runs).
 *
 * Per block, every transaction goes through:
 * - two checks (before)  checkTx (common/normalized-tx, before storing) and then the producer's
 *                        encode with the whole chain.tx.v1 schema, which $refs normalized-tx
 *                        again: the record is checked twice;
 * - one check (now)      checkTx, then encode with `recordChecked`: the envelope only;
 * - baseline             checkTx and JSON.stringify: no publish-side check at all.
 * Rounds interleave the three paths in an order a seeded coin picks, so that garbage collections
 * and CPU contention hit every path alike. Bounded: about 3 s per block.
 */
import { Kafka, logLevel } from 'kafkajs';
import { Registry } from 'prom-client';
import { networkByName } from '@chainpipe/chains';
import { TOPICS, loadContracts, type ChainTxMessage } from '@chainpipe/contracts';
import { TopicProducer } from '@chainpipe/kafka';
import { createLogger } from '@chainpipe/runtime';
import { FIXTURE_NETWORKS, bitcoinBlockItem, evmBlockItem, parseFixture, solanaBlockItem, tronBlockItem, type FixtureFamily } from '@chainpipe/testing';
import { normalizedTxCheck } from '@chainpipe/chain-parser';
import { machine } from './lib-stats';

const BUDGET_MS = 3_000;

interface Stats {
  mean: number;
  p50: number;
}

function stats(samples: number[]): Stats {
  const s = [...samples].sort((a, b) => a - b);
  return { mean: s.reduce((a, b) => a + b, 0) / s.length, p50: s[Math.floor(s.length / 2)] };
}

const fmt = (n: number, digits = 1) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

export async function run(): Promise<void> {
  const contracts = loadContracts();
  const checkTx = normalizedTxCheck(contracts);
  // Never connected: encode needs no broker.
  const producer = new TopicProducer({
    kafka: new Kafka({ brokers: ['127.0.0.1:1'], logLevel: logLevel.NOTHING }),
    contracts,
    logger: createLogger({ name: 'bench-publish', level: 'silent' }),
    registry: new Registry(),
  });
  const blocks: [string, FixtureFamily, unknown][] = [
    ['eth-mainnet 17053184', 'evm', evmBlockItem()],
    ['solana devnet', 'svm', solanaBlockItem()],
    ['bitcoin mainnet', 'utxo', bitcoinBlockItem()],
    ['tron mainnet', 'tvm', tronBlockItem()],
  ];
  console.log(machine());
  console.log('block                                     txs  two checks µs/tx  one check µs/tx  baseline µs/tx  change (mean / p50)');
  for (const [label, family, item] of blocks) {
    const network = networkByName(FIXTURE_NETWORKS[family])!;
    const txs = parseFixture(family, item as never, network).transactions;
    const messages = txs.map((tx, i): { value: ChainTxMessage } => ({ value: { id: String(1000 + i), network: network.network, is_reorg_resend: false, orphaned: false, tx } }));
    const paths: Record<'two' | 'one' | 'base', () => void> = {
      two: () => {
        for (const m of messages) {
          if (checkTx(m.value.tx) !== null) throw new Error('fixture breaks normalized-tx');
          producer.encode(TOPICS.chainTx, m);
        }
      },
      one: () => {
        for (const m of messages) {
          if (checkTx(m.value.tx) !== null) throw new Error('fixture breaks normalized-tx');
          producer.encode(TOPICS.chainTx, m, { recordChecked: true });
        }
      },
      base: () => {
        for (const m of messages) {
          if (checkTx(m.value.tx) !== null) throw new Error('fixture breaks normalized-tx');
          JSON.stringify(m.value);
        }
      },
    };
    const samples: Record<keyof typeof paths, number[]> = { two: [], one: [], base: [] };
    for (const name of Object.keys(paths) as (keyof typeof paths)[]) paths[name](); // warm-up, compiles the envelope validator
    let seed = 1;
    // A 32-bit LCG; its top bits pick the order (the low bits of an LCG are not random).
    const next = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0);
    const deadline = performance.now() + BUDGET_MS;
    while (performance.now() < deadline || samples.two.length < 20) {
      const order = (['two', 'one', 'base'] as const).map((name) => [next(), name] as const).sort((a, b) => a[0] - b[0]);
      for (const [, name] of order) {
        const t0 = performance.now();
        paths[name]();
        samples[name].push(performance.now() - t0);
      }
    }
    const perTx = (s: Stats) => (s.mean * 1000) / txs.length;
    const two = stats(samples.two);
    const one = stats(samples.one);
    const base = stats(samples.base);
    const change = `${fmt((one.mean / two.mean - 1) * 100)} % / ${fmt((one.p50 / two.p50 - 1) * 100)} %`;
    console.log(
      [label.padEnd(40), String(txs.length).padStart(4), fmt(perTx(two)).padStart(17), fmt(perTx(one)).padStart(16), fmt(perTx(base)).padStart(15), change.padStart(21)].join(' '),
    );
  }
}
