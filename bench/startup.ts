import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { Kafka, logLevel } from 'kafkajs';
import { TOPICS } from '@chainpipe/contracts';
import { createDb, ensureDatabase, migrateLatest } from '@chainpipe/db';
import { ensureTopics } from '@chainpipe/kafka';
import { APP_PORTS } from '@chainpipe/runtime';
import { REPO_ROOT, freePort, simulatorUpstreamEnv, spawnBuilt, spawnTs, stopProcess, waitReady, type RunningProcess } from '@chainpipe/testing';
import { machine, printTable } from './lib-stats';

/**
 * Start time of every app, compiled (`node dist/apps/<app>/src/main.js`, what production runs)
 * against the sources under tsx (`node --require tsx/cjs apps/<app>/src/main.ts`, what tests
 * run), from spawn to the first 200 of `/readyz` on the app's ops port, with the same broker,
 * database, Redis and upstream simulator. Rounds alternate the two forms; the first round of
 * each is a warm-up (tsx's transform cache, the OS file cache) and is not counted. Also the
 * resident memory of the ready process.
 *
 * Readiness includes what the app waits for: a consumer's group join and first assignment, a
 * gateway's database and Redis checks. That part is the same for both forms; the difference
 * between the columns is loading code.
 */
const ROUNDS = Number(process.env.BENCH_STARTUP_ROUNDS ?? 5);
const BROKERS = (process.env.BENCH_KAFKA_BROKERS ?? process.env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(',');
const DATABASE_URL = process.env.BENCH_STARTUP_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/chainpipe_bench';
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379/0';
/** The consumer groups of the apps: unique per start, so no start joins a group another one left. */
const GROUP_VARS = [
  'CHAIN_PARSER_GROUP',
  'TX_MATCHER_GROUP',
  'TX_MATCHER_CHANGES_GROUP_PREFIX',
  'TX_GATEWAY_PUSH_GROUP',
  'WEBHOOK_DISPATCHER_GROUP',
  'ORDER_TRACKER_GROUP',
  'MARKET_INGESTER_GROUP',
  'KLINE_AGGREGATOR_GROUP',
  'KLINE_HUB_GROUP_PREFIX',
  'PRICE_WRITER_GROUP',
];

type Form = 'tsx' | 'compiled';

function rssMiB(pid: number | undefined): number {
  try {
    const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
    return kb / 1024;
  } catch {
    return NaN;
  }
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** Spawn to `/readyz` 200, polled every 10 ms (waitReady's 150 ms would blur the numbers). */
async function timeStart(p: RunningProcess, opsPort: number, started: bigint): Promise<number> {
  const deadline = Date.now() + 60_000;
  let exited: number | string | undefined;
  void p.exited.then((c) => (exited = c));
  while (Date.now() < deadline) {
    if (exited !== undefined) throw new Error(`exited (${exited}) before ready:\n${p.output().slice(-2000)}`);
    const res = await fetch(`http://127.0.0.1:${opsPort}/readyz`).catch(() => undefined);
    if (res?.status === 200) return Number(process.hrtime.bigint() - started) / 1e6;
    await new Promise((r) => setTimeout(r, 10));
  }
  p.kill('SIGKILL');
  throw new Error(`not ready within 60 s:\n${p.output().slice(-2000)}`);
}

export async function run(): Promise<void> {
  const buildStarted = Date.now();
  const build = spawnSync('npm', ['run', '-s', 'build'], { cwd: REPO_ROOT, stdio: 'inherit' });
  if (build.status !== 0) throw new Error('npm run build failed');
  const buildSeconds = (Date.now() - buildStarted) / 1000;

  await ensureDatabase(DATABASE_URL);
  const db = createDb({ url: DATABASE_URL, poolMax: 1 });
  await migrateLatest(db);
  await db.destroy();
  const prefix = `bench-start-${Date.now().toString(36)}.`;
  const admin = new Kafka({ clientId: 'bench', brokers: BROKERS, logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  await ensureTopics(admin, Object.values(TOPICS), { prefix });
  await admin.disconnect();

  // The upstream simulator the other apps talk to, for the whole run (compiled, on ports of its own).
  const simPort = await freePort();
  const simOps = await freePort();
  const sim = spawnBuilt('apps/upstream-sim/src/main.ts', { PORT: String(simPort), OPS_PORT: String(simOps), LOG_LEVEL: 'warn' }, { quiet: true });
  await waitReady(sim, simOps);
  const common: Record<string, string> = {
    ...simulatorUpstreamEnv(`http://127.0.0.1:${simPort}`),
    KAFKA_BROKERS: BROKERS.join(','),
    KAFKA_TOPIC_PREFIX: prefix,
    DATABASE_URL,
    REDIS_URL,
    REDIS_KEY_PREFIX: `${prefix}redis:`,
    LOG_LEVEL: 'warn',
    STREAM_SECRET: randomBytes(16).toString('hex'),
    WEBHOOK_SECRET_KEY: randomBytes(32).toString('hex'),
    ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true',
  };

  const load = () => os.loadavg().map((l) => l.toFixed(1)).join(' ');
  console.log(`machine: ${machine()}; load ${load()}; build ${buildSeconds.toFixed(1)} s; ${ROUNDS} rounds per form after a warm-up`);
  const rows: Record<string, string | number>[] = [];
  let n = 0;
  try {
    for (const [name, ports] of Object.entries(APP_PORTS)) {
      const entry = `apps/${name}/src/main.ts`;
      const ms: Record<Form, number[]> = { tsx: [], compiled: [] };
      const rss: Record<Form, number[]> = { tsx: [], compiled: [] };
      for (let round = 0; round <= ROUNDS; round++) {
        const forms: Form[] = round % 2 ? ['compiled', 'tsx'] : ['tsx', 'compiled'];
        for (const form of forms) {
          n += 1;
          const opsPort = await freePort();
          const env: Record<string, string> = { ...common, OPS_PORT: String(opsPort) };
          if ('public' in ports) env.PORT = String(await freePort());
          for (const v of GROUP_VARS) env[v] = `${prefix}${n}-${v.toLowerCase()}`;
          const started = process.hrtime.bigint();
          const p = form === 'tsx' ? spawnTs(entry, env, { quiet: true }) : spawnBuilt(entry, env, { quiet: true });
          try {
            const took = await timeStart(p, opsPort, started);
            if (round > 0) {
              ms[form].push(took);
              rss[form].push(rssMiB(p.proc.pid));
            }
          } finally {
            await stopProcess(p);
          }
        }
      }
      const t = median(ms.tsx);
      const c = median(ms.compiled);
      rows.push({
        app: name,
        'tsx ms': Math.round(t),
        'compiled ms': Math.round(c),
        saved: `${Math.round(t - c)} ms (${Math.round((100 * (t - c)) / t)} %)`,
        'tsx RSS MiB': Math.round(median(rss.tsx)),
        'compiled RSS MiB': Math.round(median(rss.compiled)),
      });
      console.log(`${name}: tsx ${Math.round(t)} ms, compiled ${Math.round(c)} ms`);
    }
  } finally {
    await stopProcess(sim);
  }
  printTable(rows);
  console.log(`load at the end: ${load()}`);
}
