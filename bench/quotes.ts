import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Registry } from 'prom-client';
import { ChangeNowAdapter, type ChannelAdapter } from '@chainpipe/aggregator';
import { loadContracts } from '@chainpipe/contracts';
import { createDb, ensureDatabase, migrateLatest } from '@chainpipe/db';
import { listen } from '@chainpipe/http';
import { createRedis } from '@chainpipe/redis';
import { createLogger } from '@chainpipe/runtime';
import { createAggregatorGatewayApp, quotesModule } from '@chainpipe/aggregator-gateway';
import { latencyStats, machine } from './lib-stats';

/**
 * Concurrent SSE quote streams with 5 channels, through the real aggregator-gateway app (quote
 * module: parameters, reference look-ups in Postgres, channel rows, 5 ChangeNOW adapters, net
 * quote math, SSE writes), next to a raw `node:http` handler that asks the same 5 upstreams with
 * `fetch` and `res.write`s each answer and `done` — same upstream delays, same client, alternating
 * rounds. Measures time to the first `channel` event and to `done`, p50/p99.
 *
 * The upstream is an in-process ChangeNOW `estimated-amount` answering after 20, 40, 60, 80 and
 * 100 ms (channel 1…5). Uses BENCH_QUOTES_DATABASE_URL (default chainpipe_bench, migrated; 5
 * bench channel rows 901–905) and Redis (no keys written).
 */
const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 4_000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
/** Alternating rounds: a p99 of 16 streams over one round moves with a single collection pause; four give it more samples. */
const ROUNDS = Number(process.env.BENCH_QUOTES_ROUNDS ?? 4);
/**
 * Concurrent streams on each path before the rounds, not counted: the gateway has many times the
 * raw handler's code for V8 to compile and optimize, and without this its first round's p99 was
 * about twice the later rounds' (2.06–2.38× raw against 0.30–1.21× in the rounds after).
 */
const WARMUP_MS = Number(process.env.BENCH_QUOTES_WARMUP_MS ?? 2_000);
const DELAYS = [20, 40, 60, 80, 100];
const QUERY = 'src_token_id=101&dst_token_id=1001&amount_in=100000000000000000&slippage=0.01';

async function upstream(): Promise<{ base: string; close: () => void }> {
  const server = http.createServer((req, res) => {
    const m = /^\/c(\d)\/v2\/exchange\/estimated-amount/.exec(req.url ?? '');
    const delay = m ? DELAYS[Number(m[1]) - 1] : 0;
    setTimeout(() => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ fromCurrency: 'eth', toCurrency: 'btc', flow: 'standard', type: 'direct', fromAmount: 0.1, toAmount: 0.00398 }));
    }, delay);
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => server.close() };
}

/** The baseline: the same five upstream calls, each answer written as an event, then done. */
async function rawServer(base: string): Promise<{ url: string; close: () => void }> {
  const server = http.createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
    Promise.all(
      DELAYS.map(async (_d, i) => {
        const r = await fetch(`${base}/c${i + 1}/v2/exchange/estimated-amount?fromCurrency=eth&toCurrency=btc&fromAmount=0.1`);
        const j = (await r.json()) as { toAmount: number };
        res.write(`event: channel\ndata: ${JSON.stringify({ channel_id: 901 + i, estimated_out_str: String(Math.floor(j.toAmount * 1e8)) })}\n\n`);
      }),
    ).then(() => res.end('event: done\ndata: {}\n\n'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/stream?${QUERY}`, close: () => server.close() };
}

/** One stream: ms to the first channel event and to done. */
async function stream(url: string): Promise<{ first: number; last: number }> {
  const t0 = performance.now();
  const res = await fetch(url, { headers: { accept: 'text/event-stream' } });
  let first = NaN;
  let text = '';
  const decoder = new TextDecoder();
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    text += decoder.decode(chunk, { stream: true });
    if (Number.isNaN(first) && text.includes('event: channel')) first = performance.now() - t0;
  }
  if (!text.endsWith('event: done\ndata: {}\n\n')) throw new Error(`stream did not end with done: ${text.slice(-200)}`);
  return { first, last: performance.now() - t0 };
}

/** Streams of one round; `cpuMs`: this process's CPU time over the round (client, upstream and the path under test). */
async function measure(url: string, durationMs = DURATION_MS): Promise<{ first: number[]; last: number[]; streams: number; cpuMs: number }> {
  const first: number[] = [];
  const last: number[] = [];
  const cpu0 = process.cpuUsage();
  const until = performance.now() + durationMs;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < until) {
        const s = await stream(url);
        first.push(s.first);
        last.push(s.last);
      }
    }),
  );
  const cpu = process.cpuUsage(cpu0);
  return { first, last, streams: first.length, cpuMs: (cpu.user + cpu.system) / 1000 };
}

export async function run(): Promise<void> {
  const url = process.env.BENCH_QUOTES_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/chainpipe_bench';
  if (!/bench/.test(new URL(url).pathname)) throw new Error('BENCH_QUOTES_DATABASE_URL must name a database with "bench" in its name');
  await ensureDatabase(url);
  const db = createDb({ url, poolMax: 10 });
  await migrateLatest(db);
  const redis = createRedis({ url: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/0', keyPrefix: 'bench-quotes:' });
  const up = await upstream();
  const adapters: ChannelAdapter[] = DELAYS.map((_d, i) => {
    const inner = new ChangeNowAdapter({ baseUrl: `${up.base}/c${i + 1}`, apiKey: 'bench', timeoutMs: 10_000, depositWindowMs: 1_800_000 });
    return { kind: `bench-${i + 1}`, quote: (r) => inner.quote(r), createDeposit: (r) => inner.createDeposit(r), status: (id, s) => inner.status(id, s) };
  });
  for (const [i] of DELAYS.entries()) {
    await db('agg.channels')
      .insert({ id: 901 + i, name: `Bench ${i + 1}`, icon_url: null, adapter_kind: `bench-${i + 1}`, base_fee_pct: '0.3', enabled: true })
      .onConflict('id')
      .merge();
  }
  const logger = createLogger({ name: 'bench-quotes', level: 'error' });
  const registry = new Registry();
  const quotes = quotesModule({ db, redis, contracts: loadContracts(), adapters, logger, registry, bodyLimitBytes: 1 << 20, upstreamTimeoutMs: 60_000, heartbeatMs: 15_000 });
  const gw = await listen(createAggregatorGatewayApp({ logger, registry, timeoutMs: 15_000, modules: [quotes] }), 0, '127.0.0.1');
  const gwUrl = `http://127.0.0.1:${gw.address.port}/api/v2/quote/stream?${QUERY}`;
  const raw = await rawServer(up.base);
  console.log(`machine: ${machine()}; ${CONCURRENCY} concurrent streams, ${DURATION_MS} ms per round, ${ROUNDS} rounds each after ${WARMUP_MS} ms of warm-up each, upstream delays ${DELAYS.join('/')} ms`);
  try {
    await stream(gwUrl);
    await stream(raw.url);
    if (WARMUP_MS > 0) for (const target of [gwUrl, raw.url]) await measure(target, WARMUP_MS);
    const all = { gw: { first: [] as number[], last: [] as number[], cpuMs: 0 }, raw: { first: [] as number[], last: [] as number[], cpuMs: 0 } };
    // Ratios of each round (gateway / raw): first event p50, p99 and streams.
    const perRound = { p50: [] as number[], p99: [] as number[], streams: [] as number[] };
    for (let r = 0; r < ROUNDS; r++) {
      const round: Record<string, { first: number[] }> = {};
      for (const [name, target] of [['gw', gwUrl], ['raw', raw.url]] as const) {
        const m = await measure(target);
        all[name].first.push(...m.first);
        all[name].last.push(...m.last);
        all[name].cpuMs += m.cpuMs;
        round[name] = m;
      }
      const [g, w] = [latencyStats(round.gw.first), latencyStats(round.raw.first)];
      perRound.p50.push(g.p50 / w.p50);
      perRound.p99.push(g.p99 / w.p99);
      perRound.streams.push(g.count / w.count);
    }
    const row = (name: 'gw' | 'raw') => {
      const f = latencyStats(all[name].first);
      const l = latencyStats(all[name].last);
      return { streams: f.count, firstP50: f.p50, firstP99: f.p99, doneP50: l.p50, doneP99: l.p99, cpuPerStream: all[name].cpuMs / f.count };
    };
    const g = row('gw');
    const b = row('raw');
    const fmt = (n: number) => n.toFixed(1);
    // CPU per stream says what a stream costs whatever else the machine runs; latencies at a
    // shared machine's load mostly say how long the process waited for a core.
    console.log(`gateway : ${g.streams} streams, first event p50 ${fmt(g.firstP50)} / p99 ${fmt(g.firstP99)} ms, done p50 ${fmt(g.doneP50)} / p99 ${fmt(g.doneP99)} ms, CPU ${fmt(g.cpuPerStream)} ms per stream`);
    console.log(`raw     : ${b.streams} streams, first event p50 ${fmt(b.firstP50)} / p99 ${fmt(b.firstP99)} ms, done p50 ${fmt(b.doneP50)} / p99 ${fmt(b.doneP99)} ms, CPU ${fmt(b.cpuPerStream)} ms per stream`);
    const med = (xs: number[]) => latencyStats(xs).p50.toFixed(2);
    console.log(`rounds  : first p50 ${perRound.p50.map((x) => x.toFixed(2)).join(' ')} (median ${med(perRound.p50)}); p99 ${perRound.p99.map((x) => x.toFixed(2)).join(' ')} (median ${med(perRound.p99)}); streams ${perRound.streams.map((x) => x.toFixed(2)).join(' ')} (median ${med(perRound.streams)})`);
    console.log(
      `ratio   : streams ${(g.streams / b.streams).toFixed(2)}x, CPU per stream ${(g.cpuPerStream / b.cpuPerStream).toFixed(2)}x, first p50 ${(g.firstP50 / b.firstP50).toFixed(2)}x, p99 ${(g.firstP99 / b.firstP99).toFixed(2)}x; done p50 ${(g.doneP50 / b.doneP50).toFixed(2)}x, p99 ${(g.doneP99 / b.doneP99).toFixed(2)}x`,
    );
  } finally {
    await gw.close();
    raw.close();
    up.close();
    await db('agg.channels').whereBetween('id', [901, 905]).del();
    redis.disconnect();
    await db.destroy();
  }
}
