/**
 * `npm run bench -- parse`: the chain-parser write path on real blocks.
 *
 * 1. Parse only, per chain family: parseChainPayload on the raw streamer body (JSON.parse
 *    included), blocks / transactions / transfers per second.
 * 2. Store, for the large EVM block (eth-mainnet 17053184 with receipts and callTracer traces,
 *    125 txs) and the Solana devnet block (23 non-vote txs), the same rows written four ways, in
 *    interleaved rounds so table growth and cache state hit every path alike:
 *    - storeBlock            tx-store: one DB transaction, advisory lock, reorg check, upserts
 *                            (INSERT … ON CONFLICT DO UPDATE … RETURNING), address index;
 *    - parse + storeBlock    the chain-parser's work per block, from raw body to committed rows;
 *    - raw COPY              baseline: plain `pg`, one transaction, ids from the sequence, then
 *                            COPY FROM STDIN (CSV) of the block row, transactions, address and
 *                            token index rows (`copyBlock`);
 *    - raw INSERT            baseline: plain `pg`, one transaction, plain multi-row INSERTs
 *                            (no ON CONFLICT, no lock, no reorg check), RETURNING ids.
 *    Every iteration writes a new block (fresh hashes and height); row building (record JSON,
 *    address index entries) is inside every timed path.
 *    Two more storeBlock paths show what merging deliveries of one block costs:
 *    - storeBlock, replay    the first block stored again: reads the stored rows, merges, finds
 *                            nothing new and writes nothing (a delivery that adds nothing);
 *    - storeBlock, merge     (EVM) a block stored from its `block` delivery first (untimed),
 *                            then timed: its receipts + traces delivery, which changes every
 *                            row (read, merge, rewrite the rows and their index).
 *
 * "Transfers" = value movements in the records: a top-level amount > 0, each token transfer,
 * for EVM each internal call moving value, for Bitcoin each output (Solana's
 * internal_transactions restate its instructions and are not counted).
 *
 * Uses its own database (BENCH_DATABASE_URL, default chainpipe_bench), created and migrated
 * here, and truncates the tx tables there only. Bounded: about half a minute.
 */
import os from 'node:os';
import pg from 'pg';
import type { NetworkInfo } from '@chainpipe/chains';
import { networkByName } from '@chainpipe/chains';
import { createDb, ensureDatabase, migrateLatest, type Knex } from '@chainpipe/db';
import { parseChainPayload, type NormalizedTx, type ParsedBlock } from '@chainpipe/tx-parsers';
import { INDEX_INSERT_COLUMNS, TX_INSERT_COLUMNS, indexRowValues, storeBlock, txRowValues, type TxRowValues } from '@chainpipe/tx-store';
import {
  FIXTURE_NETWORKS,
  bitcoinBlockItem,
  datasetOf,
  evmBlockItem,
  evmDatasetItems,
  fixtureHeight,
  rebaseBlock,
  solanaBlockItem,
  streamerBody,
  tronBlockItem,
  type FixtureFamily,
} from '@chainpipe/testing';
import { copyBlock as rawCopy } from './lib-pg-copy';

type Json = any;

const DEFAULT_URL = 'postgres://postgres@127.0.0.1:5432/chainpipe_bench';
const PARSE_BUDGET_MS = 1_500;
/**
 * The new kinds' cost is a few percent of a 2 ms parse, and on a shared machine one parse in
 * fifty takes 4–5× the median: a mean over 3 s (~600 pairs) moved by ±5 points from run to run,
 * so this part gets ~2,000 pairs.
 */
const NEW_KINDS_BUDGET_MS = 10_000;

function transfersOf(family: FixtureFamily, tx: NormalizedTx): number {
  const positive = (a: string | null) => a !== null && /^[0-9]+$/.test(a) && BigInt(a) > 0n;
  if (family === 'utxo') return tx.to_details.length;
  let n = (positive(tx.amount) ? 1 : 0) + tx.token_transfers.length;
  if (family === 'evm') n += tx.internal_transactions.filter((i) => positive(i.amount)).length;
  return n;
}

const countTransfers = (family: FixtureFamily, txs: readonly NormalizedTx[]) => txs.reduce((n, t) => n + transfersOf(family, t), 0);

interface Stats {
  n: number;
  mean: number;
  p50: number;
  p95: number;
}

function stats(samples: number[]): Stats {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))];
  return { n: s.length, mean: s.reduce((a, b) => a + b, 0) / s.length, p50: at(0.5), p95: at(0.95) };
}

const fmt = (n: number, digits = 1) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
const pad = (s: string, w: number) => (s.length >= w ? s : s + ' '.repeat(w - s.length));
const lpad = (s: string, w: number) => (s.length >= w ? s : ' '.repeat(w - s.length) + s);

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? pad(c, widths[i]) : lpad(c, widths[i]))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

interface Fixture {
  family: FixtureFamily;
  label: string;
  network: NetworkInfo;
  item: Json;
  body: Buffer;
  parsed: ParsedBlock;
}

function loadFixture(family: FixtureFamily, label: string, item: Json): Fixture {
  const network = networkByName(FIXTURE_NETWORKS[family])!;
  const height = fixtureHeight(family, item);
  const body = Buffer.from(streamerBody([item], { network: network.network, dataset: datasetOf(family), start: height }));
  const res = parseChainPayload(body, network, {});
  if (!res.ok || res.blocks.length !== 1) throw new Error(`${label}: fixture did not parse`);
  return { family, label, network, item, body, parsed: res.blocks[0] };
}

/** One streamer element of a dataset, parsed as chain-parser does. */
function parseOne(network: NetworkInfo, item: Json, dataset: string, height: number): ParsedBlock {
  const res = parseChainPayload(streamerBody([item], { network: network.network, dataset, start: height }), network, {});
  if (!res.ok || res.blocks.length !== 1 || res.issues.length) throw new Error(`${dataset}: did not parse`);
  return res.blocks[0];
}

// ---- parse only ----------------------------------------------------------------------------

function benchParse(f: Fixture): string[] {
  const samples: number[] = [];
  const deadline = performance.now() + PARSE_BUDGET_MS;
  let txs = 0;
  while (performance.now() < deadline || samples.length < 5) {
    const t0 = performance.now();
    const res = parseChainPayload(f.body, f.network, {});
    samples.push(performance.now() - t0);
    if (!res.ok) throw new Error('parse failed');
    txs = res.blocks[0].transactions.length;
  }
  const s = stats(samples);
  const transfers = countTransfers(f.family, f.parsed.transactions);
  const perSec = 1000 / s.mean;
  return [f.label, String(txs), String(transfers), fmt(f.body.length / 1024 / 1024, 2), fmt(s.p50, 2), fmt(perSec * txs, 0), fmt(perSec * transfers, 0), fmt((perSec * f.body.length) / 1024 / 1024, 1)];
}

// ---- new transfer kinds ----------------------------------------------------------------------

/** Topic0 of the events whose decoding address monitoring III added (ERC-1155, WETH wraps). */
const NEW_KIND_TOPICS = new Set([
  '0xc3d58168c5ae7397731d063d5bbf3d657854427343f4c083240f7aacaa2d0f62',
  '0x4a39dc06d4c0dbc64b70af90fd698a233a518aa5d07e595d983b8c0526c8f7fb',
  '0xe1fffcc4923d04b559f4d29a8bfc6cda04eb5b0d3c460751c2402c5c5cc9109c',
  '0x7fcf532c15f0a6db0bd6d0e038bea71d30d808c7d98cb3bf7268a95bf5081b65',
]);
const UNMATCHED_TOPIC = '0x' + 'ee'.repeat(32);

/**
 * What the new kinds cost on the same block: eth-mainnet 17053184 with its 16 beacon withdrawals,
 * 18 WETH Deposit/Withdrawal logs and 1 ERC-1155 TransferSingle, parsed as delivered, against
 * the same body with those parts inert (no `withdrawals`, the new kinds' topic0 replaced by one
 * no decoder knows: same bytes to read, nothing new recorded), in interleaved rounds whose order
 * a seeded coin picks: young-generation collections recur every few parses, and with a fixed
 * order they lock onto one of the two paths (seen: 178 collections inside the first path's
 * samples against 40 in the other's), which then carries all of their cost and swings the mean
 * by ±10 points from run to run.
 */
function benchNewKinds(): string[][] {
  const network = networkByName('ethereum-mainnet')!;
  const item = evmBlockItem({ withdrawals: true });
  const height = fixtureHeight('evm', item);
  const inert: Json = JSON.parse(JSON.stringify(item));
  inert.block.withdrawals = [];
  for (const r of inert.receipts) for (const l of r.logs) if (NEW_KIND_TOPICS.has(l.topics[0])) l.topics[0] = UNMATCHED_TOPIC;
  const body = (x: Json) => Buffer.from(streamerBody([x], { network: network.network, dataset: 'block_with_receipts', start: height }));
  const withKinds = body(item);
  const without = body(inert);
  const records = (b: Buffer) => {
    const res = parseChainPayload(b, network, {});
    if (!res.ok) throw new Error('parse failed');
    return res.blocks[0].transactions;
  };
  const added = records(withKinds).length - records(without).length;
  const newTransfers = countTransfers('evm', records(withKinds)) - countTransfers('evm', records(without));
  const a: number[] = [];
  const b: number[] = [];
  let seed = 1;
  // A 32-bit LCG; its top bit is the coin (the low bits of an LCG are not random).
  const coin = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) >= 2 ** 31;
  const deadline = performance.now() + NEW_KINDS_BUDGET_MS;
  while (performance.now() < deadline || a.length < 10) {
    const round = [[withKinds, a], [without, b]] as const;
    for (const [buf, samples] of coin() ? round : [round[1], round[0]]) {
      const t0 = performance.now();
      parseChainPayload(buf, network, {});
      samples.push(performance.now() - t0);
    }
  }
  const sa = stats(a);
  const sb = stats(b);
  return [
    ['with the new kinds', fmt(sa.mean, 2), fmt(sa.p50, 2), `+${added} records, +${newTransfers} transfers`],
    ['same block, new kinds inert', fmt(sb.mean, 2), fmt(sb.p50, 2), `cost: ${fmt((sa.mean / sb.mean - 1) * 100, 1)} % (mean), ${fmt((sa.p50 / sb.p50 - 1) * 100, 1)} % (p50)`],
  ];
}

// ---- store paths ---------------------------------------------------------------------------

/** A copy of the parsed block under a new height and hashes ending in `tag` (no collisions). */
function variant(parsed: ParsedBlock, tag: string, height: number): ParsedBlock {
  const hash = `${parsed.block.hash}${tag}`;
  return {
    block: { ...parsed.block, height, hash },
    transactions: parsed.transactions.map((t) => ({ ...t, tx_hash: `${t.tx_hash}${tag}`, block_hash: hash, height })),
  };
}

function placeholders(rows: number, cols: number, casts: Record<number, string> = {}): string {
  const out: string[] = [];
  let p = 1;
  for (let r = 0; r < rows; r++) {
    const cells: string[] = [];
    for (let c = 0; c < cols; c++) cells.push(`$${p++}${casts[c] ? `::${casts[c]}` : ''}`);
    out.push(`(${cells.join(', ')})`);
  }
  return out.join(', ');
}

async function rawInsert(client: pg.Client, network: NetworkInfo, b: ParsedBlock): Promise<void> {
  await client.query('BEGIN');
  try {
    await client.query('INSERT INTO tx.blocks (network, height, hash, parent_hash, block_time, tx_count) VALUES ($1, $2, $3, $4, $5, $6)', [
      network.network,
      b.block.height,
      b.block.hash,
      b.block.parent_hash,
      b.block.time,
      b.transactions.length,
    ]);
    const txRows: TxRowValues[] = b.transactions.map((tx) => txRowValues(network, tx));
    const res = await client.query<{ id: string }>(
      `INSERT INTO tx.transactions (${TX_INSERT_COLUMNS.join(', ')}) VALUES ${placeholders(txRows.length, TX_INSERT_COLUMNS.length, { 9: 'jsonb' })} RETURNING id`,
      txRows.flat(),
    );
    const indexRows = b.transactions.flatMap((tx, i) => indexRowValues(network, res.rows[i].id, tx));
    if (indexRows.length) {
      await client.query(`INSERT INTO tx.address_index (${INDEX_INSERT_COLUMNS.join(', ')}) VALUES ${placeholders(indexRows.length, INDEX_INSERT_COLUMNS.length, { 4: 'text[]' })}`, indexRows.flat());
    }
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK');
    throw err;
  }
}

interface StoreRun {
  label: string;
  samples: number[];
}

/** One block as two deliveries (a first store, then a merge), for the merge path. */
interface MergePair {
  first: ParsedBlock;
  second: ParsedBlock;
}

async function benchStore(db: Knex, client: pg.Client, f: Fixture, rounds: number, heightBase: number, merge?: MergePair): Promise<{ runs: StoreRun[]; txs: number; transfers: number }> {
  const txs = f.parsed.transactions.length;
  const transfers = countTransfers(f.family, f.parsed.transactions);
  const runs: Record<string, StoreRun> = {
    store: { label: 'storeBlock', samples: [] },
    parseStore: { label: 'parse + storeBlock', samples: [] },
    replay: { label: 'storeBlock, replay', samples: [] },
    ...(merge ? { merge: { label: 'storeBlock, merge', samples: [] } } : {}),
    copy: { label: 'raw COPY (baseline)', samples: [] },
    insert: { label: 'raw INSERT (baseline)', samples: [] },
  };
  const suffixDigits = '123456789abcdef';
  const suffix = (n: number) => Array.from({ length: 6 }, (_, i) => suffixDigits[Math.floor(n / 15 ** i) % 15]).join('');
  const warmup = 5;
  let replayBlock: ParsedBlock | undefined;
  for (let i = 0; i < warmup + rounds; i++) {
    const record = i >= warmup;
    const height = heightBase + i * 10;
    // Untimed preparation: four distinct blocks of the same content.
    const forStore = variant(f.parsed, `:s${i}`, height);
    const forCopy = variant(f.parsed, `:c${i}`, height + 1);
    const forInsert = variant(f.parsed, `:i${i}`, height + 2);
    const rebased = rebaseBlock(f.family, f.item, height + 3, suffix(heightBase + i));
    const body = Buffer.from(streamerBody([rebased.item], { network: f.network.network, dataset: datasetOf(f.family), start: rebased.height }));

    let t0 = performance.now();
    await storeBlock(db, { network: f.network, ...forStore });
    if (record) runs.store.samples.push(performance.now() - t0);

    t0 = performance.now();
    const parsed = parseChainPayload(body, f.network, {});
    if (!parsed.ok) throw new Error('parse failed');
    await storeBlock(db, { network: f.network, ...parsed.blocks[0] });
    if (record) runs.parseStore.samples.push(performance.now() - t0);

    replayBlock ??= forStore;
    t0 = performance.now();
    await storeBlock(db, { network: f.network, ...replayBlock });
    if (record) runs.replay.samples.push(performance.now() - t0);

    if (merge) {
      await storeBlock(db, { network: f.network, ...variant(merge.first, `:m${i}`, height + 4) });
      const second = variant(merge.second, `:m${i}`, height + 4);
      t0 = performance.now();
      const res = await storeBlock(db, { network: f.network, ...second });
      if (record) runs.merge.samples.push(performance.now() - t0);
      if (res.changed.length !== second.transactions.length) throw new Error(`merge changed ${res.changed.length} of ${second.transactions.length} rows`);
    }

    t0 = performance.now();
    await rawCopy(client, f.network, forCopy);
    if (record) runs.copy.samples.push(performance.now() - t0);

    t0 = performance.now();
    await rawInsert(client, f.network, forInsert);
    if (record) runs.insert.samples.push(performance.now() - t0);
  }
  return { runs: Object.values(runs), txs, transfers };
}

async function countRows(db: Knex, network: string): Promise<number> {
  const [{ n }] = await db('tx.transactions').where({ network }).count<{ n: string }[]>({ n: '*' });
  return Number(n);
}

export async function run(): Promise<void> {
  const url = process.env.BENCH_DATABASE_URL ?? DEFAULT_URL;
  const dbName = decodeURIComponent(new URL(url).pathname.slice(1));
  if (!/bench/i.test(dbName)) throw new Error(`refusing to truncate tables of database ${JSON.stringify(dbName)}: its name must contain "bench"`);
  await ensureDatabase(url);
  const db = createDb({ url, poolMax: 2, applicationName: 'bench-parse' });
  const client = new pg.Client({ connectionString: url, application_name: 'bench-parse-raw' });
  const started = performance.now();
  try {
    await migrateLatest(db);
    await db.raw('TRUNCATE tx.address_token_index, tx.address_index, tx.transactions, tx.blocks RESTART IDENTITY');
    await client.connect();
    const { rows } = await client.query<{ server_version: string }>('SHOW server_version');

    console.log('bench parse: chain-parser write path (tx-store) vs raw pg baselines');
    console.log(`machine: ${os.cpus()[0]?.model ?? 'unknown cpu'}, ${os.cpus().length} cores, ${Math.round(os.totalmem() / 2 ** 30)} GiB; node ${process.version}; Postgres ${rows[0].server_version}; database ${dbName}\n`);

    const evm = loadFixture('evm', 'EVM eth-mainnet 17053184 (+receipts, traces)', evmBlockItem());
    const datasets = evmDatasetItems(17053184);
    const evmMerge: MergePair = {
      first: parseOne(evm.network, datasets.block, 'block', evm.parsed.block.height!),
      second: parseOne(evm.network, { receipts: datasets.receipts, traces: datasets.traces }, 'receipts_traces', evm.parsed.block.height!),
    };
    const sol = loadFixture('svm', 'Solana devnet getBlock (jsonParsed)', solanaBlockItem());
    const tron = loadFixture('tvm', 'Tron mainnet 60836289', tronBlockItem());
    const btc = loadFixture('utxo', 'Bitcoin 766391 (getblock v2)', bitcoinBlockItem(766391));

    console.log(`Parse only (parseChainPayload from the raw body, ~${PARSE_BUDGET_MS / 1000} s each)`);
    console.log(table(['block', 'txs', 'transfers', 'MiB', 'p50 ms', 'txs/s', 'transfers/s', 'MiB/s'], [evm, sol, tron, btc].map(benchParse)));

    console.log(`\nNew transfer kinds on eth-mainnet 17053184 (withdrawals, WETH wraps, ERC-1155), interleaved in random order, ~${NEW_KINDS_BUDGET_MS / 1000} s`);
    console.log(table(['parse', 'mean ms', 'p50 ms', ''], benchNewKinds()));

    const results: { f: Fixture; runs: StoreRun[]; txs: number; transfers: number }[] = [];
    for (const [f, rounds, heightBase, merge] of [
      [evm, 60, 100_000_000, evmMerge],
      [sol, 120, 200_000_000, undefined],
    ] as const) {
      const r = await benchStore(db, client, f, rounds, heightBase, merge);
      results.push({ f, ...r });
    }

    for (const { f, runs, txs, transfers } of results) {
      const copy = stats(runs.find((r) => r.label.startsWith('raw COPY'))!.samples).mean;
      const insert = stats(runs.find((r) => r.label.startsWith('raw INSERT'))!.samples).mean;
      console.log(`\nStore: ${f.label}: ${txs} txs, ${transfers} transfers per block; ${runs[0].samples.length} interleaved rounds`);
      console.log(
        table(
          ['path', 'mean ms', 'p50 ms', 'p95 ms', 'blocks/s', 'txs/s', 'transfers/s', 'vs COPY', 'vs INSERT'],
          runs.map((r) => {
            const s = stats(r.samples);
            const perSec = 1000 / s.mean;
            return [r.label, fmt(s.mean, 2), fmt(s.p50, 2), fmt(s.p95, 2), fmt(perSec, 1), fmt(perSec * txs, 0), fmt(perSec * transfers, 0), `${fmt(s.mean / copy, 2)}x`, `${fmt(s.mean / insert, 2)}x`];
          }),
        ),
      );
    }
    // Every path wrote what it claims: distinct blocks, one row per transaction.
    const stored = await countRows(db, evm.network.network);
    const expected = (5 + 60) * 5 * evm.parsed.transactions.length;
    if (stored !== expected) throw new Error(`expected ${expected} EVM rows in the bench database, found ${stored}`);
    console.log(`\n"vs COPY" / "vs INSERT": time per block relative to the baseline (lower is better; 2.00x = half the throughput).`);
    console.log('Transfers: top-level amount > 0, token transfers, EVM internal value calls, Bitcoin outputs.');
    console.log(`Done in ${fmt((performance.now() - started) / 1000, 1)} s.`);
  } finally {
    await client.end().catch(() => undefined);
    await db.destroy();
  }
}

if (require.main === module) {
  run().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
