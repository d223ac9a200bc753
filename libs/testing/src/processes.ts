import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { DEVELOPMENT_SIMULATOR_BASE, simulatorUpstreamEnv } from './upstream-env';
import { forbidden, waitFor } from './wait';

export const REPO_ROOT = path.resolve(__dirname, '../../..');

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
 * configuration (`make up`'s: upstream-sim on its development port), which apps have no default for.
 */
export function spawnTs(entry: string, env: Record<string, string>, opts: { quiet?: boolean } = {}): RunningProcess {
  return spawnNode(['--require', 'tsx/cjs', path.resolve(REPO_ROOT, entry)], env, opts);
}

/** dist/ of `npm run build`: where the compiled form of a source file lies. */
export const DIST_DIR = path.join(REPO_ROOT, 'dist');

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
  return spawnNode([builtPath(entry)], { NODE_OPTIONS: '', ...env }, opts);
}

function spawnNode(args: string[], env: Record<string, string>, opts: { quiet?: boolean }): RunningProcess {
  const proc = spawn(process.execPath, args, {
    cwd: REPO_ROOT,
    env: { ...simulatorUpstreamEnv(DEVELOPMENT_SIMULATOR_BASE), ...process.env, LOG_LEVEL: process.env.TEST_APP_LOG_LEVEL ?? 'info', ...env },
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
  const exited = new Promise<number | string>((resolve) => proc.on('exit', (code, signal) => resolve(code ?? signal ?? -1)));
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

/** A free TCP port on loopback. */
export async function freePort(): Promise<number> {
  const net = await import('node:net');
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}
