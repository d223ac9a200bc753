import { randomBytes } from 'node:crypto';
import { Kafka, Partitioners, logLevel } from 'kafkajs';
import { TOPICS } from '@chainpipe/contracts';
import { ensureTopics } from '@chainpipe/kafka';
import { freePort, readFixtureJson, spawnTs, stopProcess, waitReady } from '@chainpipe/testing';
import { latencyStats, machine, sustained } from './lib-stats';

/**
 * POST /stream of a 1 MB block through the real chain-ingest process (HTTP, validation,
 * publish, ack) against raw kafkajs `send` of the same bytes to the same kind of topic, same
 * concurrency, same broker, same run.
 */
export async function run(): Promise<void> {
  const brokers = (process.env.BENCH_KAFKA_BROKERS ?? process.env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(',');
  const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 8);
  const durationMs = Number(process.env.BENCH_DURATION_MS ?? 10_000);
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

  console.log(`machine: ${machine()}; body ${(body.length / 1e6).toFixed(2)} MB; concurrency ${concurrency}; ${durationMs / 1000} s each`);
  const url = `http://127.0.0.1:${port}/stream`;
  const headers = { 'content-type': 'application/octet-stream', 'content-secret-x': secret, 'cl-stream-network': 'ethereum-mainnet' };
  const viaIngest = await sustained(async () => {
    const res = await fetch(url, { method: 'POST', body, headers });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`status ${res.status}`);
  }, { concurrency, durationMs });
  await stopProcess(app);

  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
  const rawTopic = `${prefix}raw.${TOPICS.chainRaw.name}`;
  const raw = await sustained(async () => {
    await producer.send({ topic: rawTopic, acks: -1, messages: [{ key: 'ethereum-mainnet', value: body, headers: { network: 'ethereum-mainnet', received_at: String(Date.now()) } }] });
  }, { concurrency, durationMs });
  await producer.disconnect();

  const row = (name: string, r: typeof raw) => {
    const s = latencyStats(r.latencies);
    return { path: name, 'req/s': +(s.count / (r.elapsedMs / 1000)).toFixed(1), 'MB/s': +((s.count * body.length) / 1e6 / (r.elapsedMs / 1000)).toFixed(1), 'p50 ms': +s.p50.toFixed(2), 'p99 ms': +s.p99.toFixed(2), errors: r.errors };
  };
  const a = row('POST /stream (chain-ingest)', viaIngest);
  const b = row('raw kafkajs send', raw);
  console.table([a, b]);
  console.log(`ratio ingest/raw: throughput ${(a['req/s'] / b['req/s']).toFixed(2)}x, p50 ${(a['p50 ms'] / b['p50 ms']).toFixed(2)}x, p99 ${(a['p99 ms'] / b['p99 ms']).toFixed(2)}x`);
}
