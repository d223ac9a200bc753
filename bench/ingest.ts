import { randomBytes } from 'node:crypto';
import { Kafka, Partitioners, logLevel } from 'kafkajs';
import { TOPICS } from '@chainpipe/contracts';
import { ensureTopics, useNativeCrc32c } from '@chainpipe/kafka';
import { deleteTopicsWithPrefix, freePort, readFixtureJson, scrapeMetrics, spawnTs, stopProcess, waitReady } from '@chainpipe/testing';
import os from 'node:os';
import { latencyStats, machine, sustained } from './lib-stats';

/**
 * POST /stream of a 1 MB block through the real chain-ingest process (HTTP, validation,
 * publish, ack) against raw kafkajs `send` of the same bytes to the same kind of topic, same
 * concurrency, same broker, same run. The machine may be shared: the two sides alternate for
 * BENCH_ROUNDS rounds (BENCH_DURATION_MS each, after a warm-up of both), and the median of the
 * per-round ratios is reported with its range and the load average of each round. Also the CPU
 * time per request of each side, steadier than the rates on a loaded machine: the chain-ingest
 * process plus this process (the HTTP client) against this process alone (kafkajs).
 * chain-ingest's client computes record batch checksums natively (libs/kafka, `useNativeCrc32c`);
 * the raw baseline is plain kafkajs unless BENCH_INGEST_RAW_NATIVE_CRC=1 gives it the same.
 */
export async function run(): Promise<void> {
  const brokers = (process.env.BENCH_KAFKA_BROKERS ?? process.env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(',');
  const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 8);
  const durationMs = Number(process.env.BENCH_DURATION_MS ?? 10_000);
  const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
  const prefix = `bench-${Date.now().toString(36)}.`;

  // A ~1 MB delivery built from real chain data: the 125-tx block, its receipts and traces.
  const block = readFixtureJson('evm/eth-mainnet-17053184.block_fulltx.json');
  const receipts = readFixtureJson('evm/eth-mainnet-17053184.receipts.json');
  const traces = readFixtureJson('evm/eth-mainnet-17053184.debug_trace_callTracer.json');
  let items = [{ block, receipts, traces }];
  let body = Buffer.from(JSON.stringify({ data: items, metadata: { dataset: 'block_with_receipts_debug_trace' } }));
  while (body.length < 1_000_000) {
    items = [...items, { block, receipts, traces }];
    body = Buffer.from(JSON.stringify({ data: items, metadata: { dataset: 'block_with_receipts_debug_trace' } }));
  }

  if (process.env.BENCH_INGEST_RAW_NATIVE_CRC === '1' && !useNativeCrc32c()) throw new Error('kafkajs loaded its own checksum first');
  const kafka = new Kafka({ clientId: 'bench', brokers, logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  await ensureTopics(admin, [TOPICS.chainRaw], { prefix });
  await ensureTopics(admin, [TOPICS.chainRaw], { prefix: `${prefix}raw.` });
  await admin.disconnect();

  const port = await freePort();
  const opsPort = await freePort();
  const secret = randomBytes(16).toString('hex');
  const app = spawnTs('apps/chain-ingest/src/main.ts', { STREAM_SECRET: secret, PORT: String(port), OPS_PORT: String(opsPort), KAFKA_BROKERS: brokers.join(','), KAFKA_TOPIC_PREFIX: prefix, LOG_LEVEL: 'warn' }, { quiet: true });
  await waitReady(app, opsPort);

  console.log(`machine: ${machine()}; body ${(body.length / 1e6).toFixed(2)} MB; concurrency ${concurrency}; ${rounds} alternating rounds of ${durationMs / 1000} s each side`);
  const url = `http://127.0.0.1:${port}/stream`;
  const headers = { 'content-type': 'application/octet-stream', 'content-secret-x': secret, 'cl-stream-network': 'ethereum-mainnet' };
  const viaIngest = async () => {
    const res = await fetch(url, { method: 'POST', body, headers });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`status ${res.status}`);
  };
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
  const rawTopic = `${prefix}raw.${TOPICS.chainRaw.name}`;
  const viaRaw = async () => {
    await producer.send({ topic: rawTopic, acks: -1, messages: [{ key: 'ethereum-mainnet', value: body, headers: { network: 'ethereum-mainnet', received_at: String(Date.now()) } }] });
  };

  const appCpuSeconds = async () => {
    const { samples } = await scrapeMetrics(opsPort);
    return samples.find((x) => x.name === 'chainpipe_process_cpu_seconds_total')?.value ?? NaN;
  };
  /** A sustained run with the CPU seconds it took in this process and, for the ingest side, in chain-ingest. */
  const timed = async (task: () => Promise<void>, withApp: boolean) => {
    const [app0, own0] = [withApp ? await appCpuSeconds() : 0, process.cpuUsage()];
    const run = await sustained(task, { concurrency, durationMs });
    const own = process.cpuUsage(own0);
    const cpuSeconds = (own.user + own.system) / 1e6 + (withApp ? (await appCpuSeconds()) - app0 : 0);
    // The warm-up's requests are in the CPU time too: counted as requests at the timed rate.
    return { ...run, cpuSeconds, requests: run.latencies.length * (1 + 1000 / durationMs) };
  };
  type Run = Awaited<ReturnType<typeof timed>>;
  const perSecond = (r: Run) => r.latencies.length / (r.elapsedMs / 1000);
  const cpuMsPer = (runs: Run[]) => (runs.reduce((a, r) => a + r.cpuSeconds, 0) / runs.reduce((a, r) => a + r.requests, 0)) * 1000;
  const ingestRuns: Run[] = [];
  const rawRuns: Run[] = [];
  const loads: string[] = [];
  for (let round = 0; round < rounds; round++) {
    // Each side warms up (1 s) before its timed part; the first round's warm-up also covers JIT and connections.
    ingestRuns.push(await timed(viaIngest, true));
    rawRuns.push(await timed(viaRaw, false));
    loads.push(os.loadavg()[0].toFixed(1));
    console.log(`  round ${round + 1}: ingest ${perSecond(ingestRuns[round]).toFixed(1)} req/s, raw ${perSecond(rawRuns[round]).toFixed(1)} req/s (${(perSecond(ingestRuns[round]) / perSecond(rawRuns[round])).toFixed(2)}x), load average ${loads[round]}`);
  }
  await producer.disconnect();
  await stopProcess(app);
  // Both sides' topics hold every block posted: gigabytes a run.
  await deleteTopicsWithPrefix(kafka, prefix);

  const row = (name: string, runs: Run[]) => {
    const s = latencyStats(runs.flatMap((r) => r.latencies));
    const seconds = runs.reduce((a, r) => a + r.elapsedMs, 0) / 1000;
    return { path: name, 'req/s': +(s.count / seconds).toFixed(1), 'MB/s': +((s.count * body.length) / 1e6 / seconds).toFixed(1), 'p50 ms': +s.p50.toFixed(2), 'p99 ms': +s.p99.toFixed(2), 'CPU ms per request': +cpuMsPer(runs).toFixed(1), errors: runs.reduce((a, r) => a + r.errors, 0) };
  };
  const a = row('POST /stream (chain-ingest)', ingestRuns);
  const b = row('raw kafkajs send', rawRuns);
  console.table([a, b]);
  const ratios = ingestRuns.map((r, i) => perSecond(r) / perSecond(rawRuns[i])).sort((x, y) => x - y);
  const median = ratios[Math.floor(ratios.length / 2)];
  console.log(
    `ratio ingest/raw: throughput ${median.toFixed(2)}x (median of ${rounds} alternating rounds, ${ratios[0].toFixed(2)}–${ratios.at(-1)!.toFixed(2)}; all rounds together ${(a['req/s'] / b['req/s']).toFixed(2)}x), p50 ${(a['p50 ms'] / b['p50 ms']).toFixed(2)}x, p99 ${(a['p99 ms'] / b['p99 ms']).toFixed(2)}x; CPU per request ${(a['CPU ms per request'] / b['CPU ms per request']).toFixed(2)}x; load average ${loads.join(', ')}`,
  );
}
