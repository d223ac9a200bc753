import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { appNodeOptions } from '@chainpipe/runtime';
import { DIST_DIR, REPO_ROOT, buildInUse } from './built-packages';
import { developmentSimulatorBase, TEST_KEY_MNEMONIC, platformKeyEnv, simulatorUpstreamEnv } from './upstream-env';
import { forbidden, waitFor } from './wait';

export { DIST_DIR, REPO_ROOT } from './built-packages';

export interface RunningProcess {
  proc: ChildProcess;
  /** Everything the process printed so far (stdout and stderr). */
  output(): string;
  /** Resolves with the exit code (or the signal name) when the process ends. */
  exited: Promise<number | string>;
  kill(signal?: NodeJS.Signals): void;
}

/**
 * Starts a TypeScript entry point as a real, separate Node process (the way `make up` runs
 * apps), with the given environment on top of this one, and under both the development upstream
 * configuration (`make up`'s: upstream-sim on its development port) and the test kit's platform
 * keys, which apps have no default for.
 *
 * Where dist/ holds the build of this tree (`CHAINPIPE_BUILT=1`: `make test` builds it once for
 * the run) an entry with a compiled form runs compiled (`spawnBuilt`), as production runs it: an
 * app is ready in about two thirds of the time without tsx's loader, and the suites start
 * hundreds of them. Otherwise, and for entries the build leaves out (the suites' own helper
 * processes), it runs from source under tsx.
 */
export function spawnTs(entry: string, env: Record<string, string>, opts: { quiet?: boolean } = {}): RunningProcess {
  if (buildInUse() && existsSync(builtPath(entry))) return spawnBuilt(entry, env, opts);
  return spawnNode([...nodeOptionsOf(entry), '--require', 'tsx/cjs', path.resolve(REPO_ROOT, entry)], env, opts);
}

/** An app's node options (APP_NODE_OPTIONS) for its entry `apps/<name>/src/main.ts`, as `make up` and its Deployment run it. */
function nodeOptionsOf(entry: string): readonly string[] {
  const app = /^apps\/([a-z-]+)\/src\/main\.ts$/.exec(entry)?.[1];
  return app ? appNodeOptions(app) : [];
}

/** `apps/x/src/main.ts` → `<repo>/dist/apps/x/src/main.js`. */
export function builtPath(entry: string): string {
  return path.join(DIST_DIR, entry.replace(/\.ts$/, '.js'));
}

/**
 * Starts the compiled form of a TypeScript entry point (`apps/x/src/main.ts` runs
 * `dist/apps/x/src/main.js`) with plain `node`, the way production runs it: no NODE_OPTIONS of
 * this process either (a preloaded tsx would hide a compiled app requiring a .ts file). Needs
 * `npm run build`.
 */
export function spawnBuilt(entry: string, env: Record<string, string>, opts: { quiet?: boolean } = {}): RunningProcess {
  return spawnNode([...nodeOptionsOf(entry), builtPath(entry)], { NODE_OPTIONS: '', ...env }, opts);
}

/**
 * Every process the kit started and that has not ended yet. A child left running (its pipes
 * open) keeps the test runner alive after its summary, so the suites' root hooks end and name
 * them (`endLeftoverProcesses`) instead of letting the runner hang or force-exit.
 */
const running = new Map<ChildProcess, string>();

/** The test kit's platform keys: derived once (a BIP39 seed takes 2048 rounds of hashing), not per process. */
let kitKeyEnv: Record<string, string> | undefined;

function spawnNode(args: string[], env: Record<string, string>, opts: { quiet?: boolean }): RunningProcess {
  const proc = spawn(process.execPath, args, {
    cwd: REPO_ROOT,
    env: { ...simulatorUpstreamEnv(developmentSimulatorBase()), ...(kitKeyEnv ??= platformKeyEnv(TEST_KEY_MNEMONIC)), ...process.env, LOG_LEVEL: process.env.TEST_APP_LOG_LEVEL ?? 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const append = (chunk: Buffer) => {
    out += chunk.toString();
    if (out.length > 2_000_000) out = out.slice(-1_000_000);
    if (!opts.quiet && process.env.TEST_SHOW_APP_LOGS) process.stderr.write(chunk);
  };
  proc.stdout!.on('data', append);
  proc.stderr!.on('data', append);
  running.set(proc, path.relative(REPO_ROOT, args[args.length - 1]));
  const exited = new Promise<number | string>((resolve) =>
    proc.on('exit', (code, signal) => {
      running.delete(proc);
      resolve(code ?? signal ?? -1);
    }),
  );
  return { proc, output: () => out, exited, kill: (signal = 'SIGTERM') => void proc.kill(signal) };
}

/** Waits until the process's ops port answers /readyz with 200 (or fails if it exits first). */
export async function waitReady(p: RunningProcess, opsPort: number, timeoutMs = 30_000): Promise<void> {
  let exited: number | string | undefined;
  void p.exited.then((c) => (exited = c));
  await waitFor(
    async () => {
      // At once, not at the timeout: a crashed app is a failure, not a slow start.
      if (exited !== undefined) forbidden(`process exited (${exited}) before ready`);
      const res = await fetch(`http://127.0.0.1:${opsPort}/readyz`).catch(() => undefined);
      return res?.status === 200;
    },
    { timeoutMs, intervalMs: 150, what: `readiness on ${opsPort}` },
  ).catch((err) => {
    if (exited === undefined) p.kill('SIGKILL');
    throw new Error(`${(err as Error).message}\n--- output ---\n${p.output().slice(-3000)}`);
  });
}

/** Stops a process with SIGTERM and waits for it, SIGKILL past the timeout. */
export async function stopProcess(p: RunningProcess, timeoutMs = 20_000): Promise<number | string> {
  if (p.proc.exitCode !== null || p.proc.signalCode !== null) return p.proc.exitCode ?? p.proc.signalCode ?? -1;
  p.kill('SIGTERM');
  const timer = setTimeout(() => p.kill('SIGKILL'), timeoutMs);
  const code = await p.exited;
  clearTimeout(timer);
  return code;
}

/**
 * Kills (SIGKILL) every process the kit started that is still running and waits until they are
 * gone; returns what they were (entry and PID), empty when the tests stopped all they started.
 */
export async function endLeftoverProcesses(): Promise<string[]> {
  const left = [...running.entries()];
  await Promise.all(
    left.map(([proc]) => {
      const gone = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
      proc.kill('SIGKILL');
      return gone;
    }),
  );
  return left.map(([proc, entry]) => `${entry} (pid ${proc.pid})`);
}

/**
 * Where the tests' ports come from: below Linux's ephemeral range (32768–60999 by default), from
 * which the kernel takes the local port of every outgoing connection. A port found free in that
 * range (what `listen(0)` gives) could be taken by one of the many connections the tests open to
 * the broker, Postgres and Redis before the app binds it; nothing connecting out takes one
 * here. Above the project's fixed ports (the apps' 8080–8090 and Kafka's 9092–9093, each moved by
 * at most 5,000 for a demo stack, and the test broker's 19092).
 */
const TEST_PORTS = { from: 20_000, to: 32_000 };
/** Ports this process handed out lately: two callers at once must not both get one that probed free. */
const handedOut = new Set<number>();

function remember(port: number): void {
  if (handedOut.size >= 2_000) handedOut.clear();
  handedOut.add(port);
}

/** True when nothing listens on the loopback port (and this process did not hand it out lately). */
export async function portFree(port: number): Promise<boolean> {
  if (handedOut.has(port)) return false;
  const net = await import('node:net');
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

/** `count` consecutive free loopback ports (one port when `count` is 1), the first of them returned. */
export async function freePortRange(count: number): Promise<number> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const base = TEST_PORTS.from + Math.floor(Math.random() * (TEST_PORTS.to - TEST_PORTS.from - count));
    let free = true;
    for (let p = base; p < base + count && free; p++) free = await portFree(p);
    // Taken before the next await: a concurrent caller's probe of these ports now fails.
    if (free && Array.from({ length: count }, (_, i) => base + i).every((p) => !handedOut.has(p))) {
      for (let p = base; p < base + count; p++) remember(p);
      return base;
    }
  }
  throw new Error(`no ${count} consecutive free ports found in ${TEST_PORTS.from}–${TEST_PORTS.to}`);
}

/** A free TCP port on loopback, outside the ephemeral range (see TEST_PORTS). */
export async function freePort(): Promise<number> {
  return freePortRange(1);
}

/**
 * Runs the admin command as an operator does (`npm run admin -- …`: a process of its own) against
 * `databaseUrl`, `env` over this process's environment; its exit code and what it printed
 * (stdout, then stderr when it failed).
 */
export async function runAdmin(databaseUrl: string, args: string[], env: Record<string, string> = {}): Promise<{ code: number; out: string }> {
  try {
    const { stdout } = await promisify(execFile)(process.execPath, ['--require', 'tsx/cjs', 'apps/admin/src/main.ts', ...args], { cwd: REPO_ROOT, env: { ...process.env, DATABASE_URL: databaseUrl, ...env } });
    return { code: 0, out: stdout };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? -1, out: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}
