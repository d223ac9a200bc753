/**
 * `npm run bench -- pipeline`: the sustained `/stream` → stored → `chain.tx.v1` rate.
 *
 * Real blocks (test/fixtures/chain): eth-mainnet 17053184 with its receipts and callTracer traces
 * (125 txs), the Solana devnet block (23 non-vote txs), Tron 60836289 (170 txs) and Bitcoin 766390
 * (16 txs), one of each per cycle (the proportions of the fixtures), each under a new height and
 * new hashes, are posted to chain-ingest's `POST /stream` at a rising rate, through chain-ingest,
 * chain-parser and tx-matcher running as processes. Each step holds its rate for a window
 * (BENCH_PIPELINE_WINDOW_S, 60 s by default) while the consumer lag of the parser (chain.raw.v1)
 * and of the matcher (chain.tx.v1) is read with the kafkajs admin every second; a step holds when
 * every post was answered 200 on schedule and neither lag went above BENCH_PIPELINE_LAG_S seconds
 * of the step's input in the second half of the window, and at least 90 % of the step's rate was
 * stored within the window (a lag creeping up within its bound does not hold). The rate rises by
 * ×1.25 until a step does not hold, then bisects between the highest held and that one
 * (BENCH_PIPELINE_REFINE_STEPS). The result is the highest rate held, in
 * transactions stored (the parser's counter) and published (chain.tx.v1's end offsets) per second.
 *
 * Baseline, in the same run and alternating with the pipeline: a raw `COPY … FROM STDIN` of the
 * same rows (the same blocks parsed, then block row, transactions, address and token index rows,
 * one DB transaction per block; `copyBlock`) on one connection, in transactions per second. (A
 * parser copy stores up to three partitions, so networks, side by side on as many connections.)
 * Order: COPY, pipeline with one parser, COPY, pipeline with two parser copies in one group on
 * chain.raw.v1's three partitions (keyed by network), COPY; each pipeline figure is set against
 * the mean of the COPY runs on either side of it. The load average is printed with each figure.
 *
 * After each set-up, the parser copies' own means (parse per record, store per block, handler call)
 * say where their time went; BENCH_PIPELINE_PARSER_NODE_OPTIONS gives them NODE_OPTIONS (a profiler's `--require`).
 *
 * Needs a broker (BENCH_KAFKA_BROKERS), Postgres (BENCH_PIPELINE_DATABASE_URL, a database whose
 * name contains "bench"; created and migrated here, rows are only added) and Redis (REDIS_URL).
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import os from 'node:os';
import pg from 'pg';
import { Kafka, logLevel, type Admin } from 'kafkajs';
import { networkByName, type NetworkInfo } from '@chainpipe/chains';
import { TOPICS } from '@chainpipe/contracts';
import { ApiKeyRepository, createDb, ensureDatabase, migrateLatest } from '@chainpipe/db';
import { parseChainPayload, type ParsedBlock } from '@chainpipe/tx-parsers';
import {
  FIXTURE_NETWORKS,
  bitcoinBlockItem,
  createRegistryTopics,
  datasetOf,
  deleteTopicsWithPrefix,
  evmBlockItem,
  freePort,
  rebaseBlock,
  scrapeMetrics,
  solanaBlockItem,
  spawnTs,
  stopProcess,
  streamerBody,
  tronBlockItem,
  waitFor,
  waitReady,
  type FixtureFamily,
  type RunningProcess,
} from '@chainpipe/testing';
import { copyBlock } from './lib-pg-copy';
import { histogramMeans, machine, printTable } from './lib-stats';

type Json = any;

const WINDOW_S = Number(process.env.BENCH_PIPELINE_WINDOW_S ?? 60);
/** First rate tried, transactions per second, and the factor between steps. */
const START_TPS = Number(process.env.BENCH_PIPELINE_START_TPS ?? 500);
const STEP = Number(process.env.BENCH_PIPELINE_STEP ?? 1.25);
const MAX_STEPS = Number(process.env.BENCH_PIPELINE_MAX_STEPS ?? 15);
/**
 * Steps tried after the ladder between the highest rate held and the first that was not, each at
 * the geometric middle of the two (bisection): a ladder of ×1.25 alone reports up to a fifth
 * below the highest rate held, two such steps narrow it to ~6 %.
 */
const REFINE_STEPS = Number(process.env.BENCH_PIPELINE_REFINE_STEPS ?? 2);
/** A lag is bounded while it stays under this many seconds of the step's input. */
const LAG_S = Number(process.env.BENCH_PIPELINE_LAG_S ?? 5);
/** Seconds of each raw COPY run. */
const COPY_S = Number(process.env.BENCH_PIPELINE_COPY_S ?? Math.min(30, WINDOW_S));
/** Which parser set-ups run: 1 (one copy), 2 (two copies). */
const COPIES = (process.env.BENCH_PIPELINE_COPIES ?? '1,2').split(',').map(Number);
/** A step holds only if the transactions stored in its window are at least this share of its rate (the lag does not creep up). */
const HELD_SHARE = 0.9;
/** Posts in flight at most: a step whose posts pile up beyond this has not held. */
const MAX_IN_FLIGHT = 16;
const BROKERS = (process.env.BENCH_KAFKA_BROKERS ?? process.env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(',');
const DATABASE_URL = process.env.BENCH_PIPELINE_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/chainpipe_bench';
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379/0';
/** NODE_OPTIONS of the parser copies (a `--require` of a profiler, say). */
const PARSER_NODE_OPTIONS = process.env.BENCH_PIPELINE_PARSER_NODE_OPTIONS;

const load = () => os.loadavg()[0].toFixed(1);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * One fixture block as a body template: rebased once under a marker suffix and a marker height,
 * so each post only swaps those markers in the JSON text (one regex pass over the text, instead
 * of a rebase of the parsed tree per post, which would take the cores the pipeline is measured on).
 */
interface BlockTemplate {
  family: FixtureFamily;
  network: NetworkInfo;
  txs: number;
  text: string;
  markerHeight: number;
}

const MARKER_SUFFIX = 'e7d9c1';
const SUFFIX_DIGITS = '123456789abcdef';

/** The n-th 6-character suffix of [1-9a-f] (valid in hex and Base58): distinct for n < 15^6. */
function suffixOf(n: number): string {
  return Array.from({ length: 6 }, (_, i) => SUFFIX_DIGITS[Math.floor(n / 15 ** i) % 15]).join('');
}

/**
 * The network each family's block is posted under (BENCH_PIPELINE_NETWORKS, `family=network,…`):
 * the fixtures' own by default. chain.raw.v1 is keyed by network, and the four default names all
 * hash to one of its three partitions; e.g. `evm=base-mainnet,svm=solana-mainnet` spreads them
 * over all three (what a deployment with many networks sees).
 */
const NETWORKS: Record<FixtureFamily, string> = {
  ...FIXTURE_NETWORKS,
  ...Object.fromEntries((process.env.BENCH_PIPELINE_NETWORKS ?? '').split(',').filter(Boolean).map((kv) => kv.split('='))),
};

function template(family: FixtureFamily, item: Json, markerHeight: number): BlockTemplate {
  const network = networkByName(NETWORKS[family]);
  if (network?.family !== family) throw new Error(`${NETWORKS[family]} is not a network of the ${family} family`);
  const original = JSON.stringify(item);
  for (const marker of [MARKER_SUFFIX, String(markerHeight), String(markerHeight - 1), markerHeight.toString(16)]) {
    if (original.includes(marker)) throw new Error(`marker ${marker} occurs in the ${family} fixture`);
  }
  const rebased = rebaseBlock(family, item, markerHeight, MARKER_SUFFIX);
  const text = streamerBody([rebased.item], { network: network.network, dataset: datasetOf(family), start: markerHeight });
  const t: BlockTemplate = { family, network, txs: 0, text, markerHeight };
  const parsed = parseBody(t, bodyOf(t, markerHeight + 1, suffixOf(1)));
  if (parsed.block.height !== markerHeight + 1 || !String(parsed.block.hash).endsWith(suffixOf(1))) throw new Error(`the ${family} template did not rebase: ${parsed.block.height} ${parsed.block.hash}`);
  t.txs = parsed.transactions.length;
  return t;
}

function bodyOf(t: BlockTemplate, height: number, suffix: string): string {
  const h = t.markerHeight;
  const pattern = new RegExp(`${MARKER_SUFFIX}|"0x${h.toString(16)}"|(?<![0-9])${h}(?![0-9])|(?<![0-9])${h - 1}(?![0-9])`, 'g');
  return t.text.replace(pattern, (m) => {
    if (m === MARKER_SUFFIX) return suffix;
    if (m.startsWith('"0x')) return `"0x${height.toString(16)}"`;
    return m === String(h) ? String(height) : String(height - 1);
  });
}

function parseBody(t: BlockTemplate, body: string): ParsedBlock {
  const res = parseChainPayload(Buffer.from(body), t.network, {});
  if (!res.ok || res.issues.length || res.blocks.length !== 1) throw new Error(`the ${t.family} body did not parse cleanly`);
  return res.blocks[0];
}

/** Posts and blocks of a run: heights and suffixes never repeat within it (nor, by the run base, across runs). */
class BlockSource {
  private n = 0;
  constructor(
    readonly templates: BlockTemplate[],
    private readonly heightBase: number,
    private readonly suffixBase: number,
  ) {}

  get txsPerCycle(): number {
    return this.templates.reduce((a, t) => a + t.txs, 0);
  }

  next(): { t: BlockTemplate; body: string } {
    const i = this.n++;
    const t = this.templates[i % this.templates.length];
    return { t, body: bodyOf(t, this.heightBase + i, suffixOf(this.suffixBase + i)) };
  }
}

interface Processes {
  ingest: RunningProcess;
  ingestPort: number;
  parsers: Array<{ p: RunningProcess; ops: number }>;
  matcher: RunningProcess;
}

interface StepResult {
  copies: number;
  targetTps: number;
  posted: number;
  failedPosts: number;
  late: boolean;
  storedTps: number;
  publishedTps: number;
  maxParserLag: number;
  maxMatcherLag: number;
  parserBound: number;
  matcherBound: number;
  held: boolean;
  load: string;
}

async function groupLag(admin: Admin, groupId: string, topic: string): Promise<number> {
  const [ends, [committed]] = await Promise.all([admin.fetchTopicOffsets(topic), admin.fetchOffsets({ groupId, topics: [topic] })]);
  const at = new Map((committed?.partitions ?? []).map((p) => [p.partition, Number(p.offset)]));
  return ends.reduce((sum, p) => sum + Math.max(0, Number(p.high) - Math.max(0, at.get(p.partition) ?? 0)), 0);
}

async function endSum(admin: Admin, topic: string): Promise<number> {
  return (await admin.fetchTopicOffsets(topic)).reduce((a, p) => a + Number(p.high), 0);
}

async function storedCount(parsers: Processes['parsers']): Promise<number> {
  let n = 0;
  for (const { ops } of parsers) {
    const { samples } = await scrapeMetrics(ops);
    n += samples.filter((s) => s.name === 'chainpipe_parser_txs_stored_total').reduce((a, s) => a + s.value, 0);
  }
  return n;
}

export async function run(): Promise<void> {
  const dbName = decodeURIComponent(new URL(DATABASE_URL).pathname.slice(1));
  if (!/bench/i.test(dbName)) throw new Error(`refusing to write to database ${JSON.stringify(dbName)}: its name must contain "bench"`);
  console.log(`machine: ${machine()}; window ${WINDOW_S} s, rates from ${START_TPS} tx/s ×${STEP} then ${REFINE_STEPS} bisection steps, lag bound ${LAG_S} s of input; load average ${load()}`);
  await ensureDatabase(DATABASE_URL);
  const db = createDb({ url: DATABASE_URL, poolMax: 2, applicationName: 'bench-pipeline' });
  await migrateLatest(db);
  const client = new pg.Client({ connectionString: DATABASE_URL, application_name: 'bench-pipeline-copy' });
  await client.connect();

  // Heights of this run: 10,000 a second of wall clock apart from another run's, above real chains'.
  const heightBase = 2_000_000_000 + (Math.floor(Date.now() / 1000) % 90_000) * 10_000;
  const templates = [template('evm', evmBlockItem(), 3_987_654_321), template('svm', solanaBlockItem(), 3_987_654_321), template('tvm', tronBlockItem(), 3_987_654_321), template('utxo', bitcoinBlockItem(766390), 3_987_654_321)];
  const source = new BlockSource(templates, heightBase, randomBytes(3).readUIntBE(0, 3) % 10_000_000);
  console.log(`cycle: ${templates.map((t) => `${t.network.network} ${t.txs} txs (${(t.text.length / 1e6).toFixed(2)} MB)`).join(', ')} = ${source.txsPerCycle} txs`);

  const prefix = `bench-pl-${randomBytes(3).toString('hex')}.`;
  process.env.TEST_KAFKA_BROKERS = BROKERS.join(',');
  await createRegistryTopics(prefix, [TOPICS.chainRaw, TOPICS.chainFetched, TOPICS.chainTx, TOPICS.addressesChanges, TOPICS.txPush]);
  const kafka = new Kafka({ clientId: 'bench-pipeline', brokers: BROKERS, logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();

  // The matcher watches one party of each fixture block, so it has pushes to publish too.
  const appId = `bench-pl-${randomBytes(3).toString('hex')}`;
  await new ApiKeyRepository(db).createApp(appId, appId);
  const watched = templates.map((t) => {
    const tx = parseBody(t, bodyOf(t, heightBase - 1, suffixOf(0))).transactions.find((x) => x.receiver)!;
    return { app_id: appId, chain_type: t.network.chainType, address: tx.receiver! };
  });
  await db('tx.monitored_addresses').insert(watched);

  const secret = randomBytes(12).toString('hex');
  const common = { KAFKA_BROKERS: BROKERS.join(','), KAFKA_TOPIC_PREFIX: prefix, DATABASE_URL, REDIS_URL, REDIS_KEY_PREFIX: `${prefix}redis:`, LOG_LEVEL: 'warn' };
  const parserGroup = `${prefix}parser`;
  const matcherGroup = `${prefix}matcher`;
  const startParser = async () => {
    const ops = await freePort();
    const profile: Record<string, string> = PARSER_NODE_OPTIONS ? { NODE_OPTIONS: PARSER_NODE_OPTIONS } : {};
    const p = spawnTs('apps/chain-parser/src/main.ts', { ...common, ...profile, OPS_PORT: String(ops), CHAIN_PARSER_GROUP: parserGroup }, { quiet: true });
    return { p, ops };
  };
  const [ingestPort, ingestOps, matcherOps] = await Promise.all([freePort(), freePort(), freePort()]);
  const procs: Processes = {
    ingest: spawnTs('apps/chain-ingest/src/main.ts', { ...common, STREAM_SECRET: secret, PORT: String(ingestPort), OPS_PORT: String(ingestOps) }, { quiet: true }),
    ingestPort,
    parsers: [await startParser()],
    matcher: spawnTs('apps/tx-matcher/src/main.ts', { ...common, OPS_PORT: String(matcherOps), TX_MATCHER_GROUP: matcherGroup }, { quiet: true }),
  };
  const rawTopic = `${prefix}${TOPICS.chainRaw.name}`;
  const txTopic = `${prefix}${TOPICS.chainTx.name}`;

  // The load generator shares the two cores with what it measures, so it does as little as it
  // can while a step runs: the step's bodies are built before it starts (as the COPY baseline's
  // rows are), and each is sent with node:http over kept-alive connections (fetch cost several
  // times the CPU per megabyte body).
  const agent = new http.Agent({ keepAlive: true, maxSockets: MAX_IN_FLIGHT });
  const post = (body: Buffer, network: string): Promise<boolean> =>
    new Promise((resolve) => {
      const req = http.request(
        { host: '127.0.0.1', port: procs.ingestPort, path: '/stream', method: 'POST', agent, headers: { 'content-secret-x': secret, 'cl-stream-network': network, 'content-type': 'application/octet-stream', 'content-length': body.length } },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode === 200));
          res.on('error', () => resolve(false));
        },
      );
      req.on('error', () => resolve(false));
      req.end(body);
    });
  const drained = async (timeoutMs: number) =>
    waitFor(async () => (await groupLag(admin, parserGroup, rawTopic)) === 0 && (await groupLag(admin, matcherGroup, txTopic)) === 0, { timeoutMs, intervalMs: 500, what: 'the pipeline drained' });

  /** One step: the rate held for the window, lags sampled each second. */
  const step = async (copies: number, targetTps: number): Promise<StepResult> => {
    const postsPerS = (targetTps / source.txsPerCycle) * templates.length;
    const intervalMs = 1000 / postsPerS;
    const bodies = Array.from({ length: Math.ceil(WINDOW_S * postsPerS) + 1 }, () => {
      const { t, body } = source.next();
      return { network: t.network.network, body: Buffer.from(body) };
    });
    const [stored0, published0] = await Promise.all([storedCount(procs.parsers), endSum(admin, txTopic)]);
    const t0 = Date.now();
    const end = t0 + WINDOW_S * 1000;
    let posted = 0;
    let failedPosts = 0;
    let inFlight = 0;
    let late = false;
    let maxParserLag = 0;
    let maxMatcherLag = 0;
    const pending: Promise<void>[] = [];
    const sampler = (async () => {
      while (Date.now() < end) {
        await sleep(1000);
        if (Date.now() < t0 + (WINDOW_S * 1000) / 2) continue;
        const [p, m] = await Promise.all([groupLag(admin, parserGroup, rawTopic), groupLag(admin, matcherGroup, txTopic)]);
        maxParserLag = Math.max(maxParserLag, p);
        maxMatcherLag = Math.max(maxMatcherLag, m);
      }
    })();
    // Open loop: post i is due at t0 + i × interval, whatever the answers before it.
    for (let i = 0; ; i++) {
      const due = t0 + i * intervalMs;
      if (due >= end) break;
      const wait = due - Date.now();
      if (wait > 0) await sleep(wait);
      else if (wait < -1000) late = true;
      if (inFlight >= MAX_IN_FLIGHT) {
        late = true;
        while (inFlight >= MAX_IN_FLIGHT) await sleep(5);
      }
      const { network, body } = bodies[i];
      inFlight++;
      posted++;
      pending.push(
        post(body, network).then((ok) => {
          inFlight--;
          if (!ok) failedPosts++;
        }),
      );
    }
    await Promise.all([...pending, sampler]);
    const elapsedS = (Date.now() - t0) / 1000;
    const [stored1, published1] = await Promise.all([storedCount(procs.parsers), endSum(admin, txTopic)]);
    const parserBound = Math.max(8, Math.ceil(LAG_S * postsPerS));
    const matcherBound = Math.max(500, Math.ceil(LAG_S * targetTps));
    const storedTps = (stored1 - stored0) / elapsedS;
    const held = failedPosts === 0 && !late && maxParserLag <= parserBound && maxMatcherLag <= matcherBound && storedTps >= HELD_SHARE * targetTps;
    return { copies, targetTps, posted, failedPosts, late, storedTps, publishedTps: (published1 - published0) / elapsedS, maxParserLag, maxMatcherLag, parserBound, matcherBound, held, load: load() };
  };

  /** Raw COPY of the same rows: the next blocks of the source, parsed untimed, copied for COPY_S seconds. */
  const copyRun = async (): Promise<{ tps: number; load: string }> => {
    const blocks: Array<{ t: BlockTemplate; parsed: ParsedBlock }> = [];
    let txs = 0;
    let spent = 0;
    while (spent < COPY_S * 1000) {
      while (blocks.length < templates.length) {
        const { t, body } = source.next();
        blocks.push({ t, parsed: parseBody(t, body) });
      }
      const { t, parsed } = blocks.shift()!;
      const t0 = performance.now();
      txs += await copyBlock(client, t.network, parsed);
      spent += performance.now() - t0;
    }
    return { tps: txs / (spent / 1000), load: load() };
  };

  const rows: Record<string, string | number>[] = [];
  const ratios: string[] = [];
  const copies: Array<{ tps: number; load: string }> = [];
  const addCopy = async () => {
    const c = await copyRun();
    copies.push(c);
    rows.push({ path: 'raw COPY of the same rows (one DB transaction per block)', 'target tx/s': '', 'stored tx/s': Math.round(c.tps), 'published tx/s': '', 'max parser lag (bound)': '', 'max matcher lag (bound)': '', held: '', load: c.load });
  };
  try {
    await Promise.all([waitReady(procs.ingest, ingestOps, 150_000), waitReady(procs.matcher, matcherOps, 150_000), ...procs.parsers.map(({ p, ops }) => waitReady(p, ops, 150_000))]);
    // Warm-up: one cycle through every process (first joins, first connections, JIT), untimed.
    for (let i = 0; i < templates.length; i++) {
      const { t, body } = source.next();
      if (!(await post(Buffer.from(body), t.network.network))) throw new Error('warm-up post failed');
    }
    await drained(120_000);
    await addCopy();
    for (const n of COPIES) {
      while (procs.parsers.length < n) {
        const extra = await startParser();
        await waitReady(extra.p, extra.ops, 150_000);
        procs.parsers.push(extra);
      }
      let best: StepResult | undefined;
      let notHeld: number | undefined;
      const runStep = async (tps: number): Promise<StepResult> => {
        const r = await step(n, tps);
        rows.push({
          path: `pipeline, ${n} parser cop${n === 1 ? 'y' : 'ies'}`,
          'target tx/s': r.targetTps,
          'stored tx/s': Math.round(r.storedTps),
          'published tx/s': Math.round(r.publishedTps),
          'max parser lag (bound)': `${r.maxParserLag} (${r.parserBound}) records`,
          'max matcher lag (bound)': `${r.maxMatcherLag} (${r.matcherBound})`,
          held: r.held ? 'yes' : `no${r.failedPosts ? `, ${r.failedPosts} posts failed` : ''}${r.late ? ', posts late' : ''}${r.storedTps < HELD_SHARE * r.targetTps ? ', stored < 90 %' : ''}`,
          load: r.load,
        });
        console.log(`  step ${n} cop${n === 1 ? 'y' : 'ies'} at ${r.targetTps} tx/s: stored ${Math.round(r.storedTps)}, published ${Math.round(r.publishedTps)}, lags ${r.maxParserLag}/${r.maxMatcherLag}, ${r.held ? 'held' : 'not held'} (load ${r.load})`);
        await drained(600_000);
        return r;
      };
      let tps = START_TPS;
      for (let s = 0; s < MAX_STEPS; s++, tps *= STEP) {
        const r = await runStep(Math.round(tps));
        if (!r.held) {
          notHeld = r.targetTps;
          break;
        }
        best = r;
      }
      // Bisection between the highest rate held and the first not held (the ladder's gap).
      for (let s = 0; best && notHeld && s < REFINE_STEPS; s++) {
        const middle = Math.round(Math.sqrt(best.targetTps * notHeld));
        if (middle <= best.targetTps || middle >= notHeld) break;
        const r = await runStep(middle);
        if (r.held) best = r;
        else notHeld = middle;
      }
      // Where a parser copy's time went over the steps of this set-up: its own duration histograms.
      for (const [k, { ops }] of procs.parsers.entries()) {
        const means = await histogramMeans(ops, `chain-parser ${k + 1}`, ['chainpipe_parser_parse_duration_seconds', 'chainpipe_parser_store_duration_seconds', 'chainpipe_consumer_batch_duration_seconds']);
        console.log(`  ${means.map((m) => `${m.what}: ${m.count} × ${m.meanMs.toFixed(1)} ms`).join('; ')}`);
      }
      const before = copies.at(-1)!;
      await addCopy();
      const copyTps = (before.tps + copies.at(-1)!.tps) / 2;
      if (best) {
        ratios.push(
          `pipeline with ${n} parser cop${n === 1 ? 'y' : 'ies'}: held ${best.targetTps} tx/s for ${WINDOW_S} s (stored ${Math.round(best.storedTps)}, published ${Math.round(best.publishedTps)} tx/s): ${(best.storedTps / copyTps).toFixed(2)}x the raw COPY's ${Math.round(copyTps)} tx/s (load average ${best.load}; COPY runs at ${before.load} and ${copies.at(-1)!.load})`,
        );
      } else {
        ratios.push(`pipeline with ${n} parser cop${n === 1 ? 'y' : 'ies'}: did not hold the first rate, ${START_TPS} tx/s (raw COPY ${Math.round(copyTps)} tx/s): lower BENCH_PIPELINE_START_TPS`);
      }
    }
    printTable(rows);
    // chain.raw is keyed by network: how the four networks fell on its partitions decides what a second copy can take.
    const perPartition = (await admin.fetchTopicOffsets(rawTopic)).map((p) => `partition ${p.partition}: ${p.high} records`);
    console.log(`  ${rawTopic}: ${perPartition.join(', ')}`);
    console.log(ratios.map((r) => `  ${r}`).join('\n'));
  } finally {
    agent.destroy();
    await Promise.all([procs.ingest, procs.matcher, ...procs.parsers.map((x) => x.p)].map((p) => stopProcess(p)));
    await admin.disconnect();
    // chain.raw holds every block posted: gigabytes a run.
    await deleteTopicsWithPrefix(kafka, prefix);
    await client.end().catch(() => undefined);
    await db('core.apps').where({ app_id: appId }).del();
    await db.destroy();
  }
}
