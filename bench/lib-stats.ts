import os from 'node:os';
import { readFileSync, readdirSync } from 'node:fs';
import { scrapeMetrics } from '@chainpipe/testing';

export interface LatencyStats {
  count: number;
  p50: number;
  p99: number;
  mean: number;
}

/** Percentiles of latencies in milliseconds (nearest-rank). */
export function latencyStats(samples: number[]): LatencyStats {
  const s = [...samples].sort((a, b) => a - b);
  const at = (p: number) => s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] ?? NaN;
  return { count: s.length, p50: at(50), p99: at(99), mean: s.reduce((a, b) => a + b, 0) / (s.length || 1) };
}

/** The middle value (the upper one of an even count, so that it is one of the values). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/**
 * Runs `task` with `concurrency` workers for `durationMs` (after a warm-up) and collects each
 * call's latency. Bounded in time and so in count.
 */
export async function sustained(task: () => Promise<void>, opts: { concurrency: number; durationMs: number; warmupMs?: number }): Promise<{ latencies: number[]; elapsedMs: number; errors: number }> {
  const warmEnd = Date.now() + (opts.warmupMs ?? 1000);
  const worker = async (until: number, record: boolean, latencies: number[], errors: { n: number }) => {
    while (Date.now() < until) {
      const t0 = process.hrtime.bigint();
      try {
        await task();
        if (record) latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
      } catch {
        errors.n += 1;
      }
    }
  };
  await Promise.all(Array.from({ length: opts.concurrency }, () => worker(warmEnd, false, [], { n: 0 })));
  const latencies: number[] = [];
  const errors = { n: 0 };
  const start = Date.now();
  await Promise.all(Array.from({ length: opts.concurrency }, () => worker(start + opts.durationMs, true, latencies, errors)));
  return { latencies, elapsedMs: Date.now() - start, errors: errors.n };
}

export function machine(): string {
  return `${os.cpus().length} cores (${os.cpus()[0]?.model.trim() ?? 'unknown cpu'}), ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
}

export function printTable(rows: Record<string, string | number>[]): void {
  console.table(rows);
}

/** Mean of each histogram (all label sets together) an app exposes on its ops port. */
export async function histogramMeans(opsPort: number, app: string, names: string[]): Promise<Array<{ what: string; count: number; meanMs: number }>> {
  const { samples } = await scrapeMetrics(opsPort);
  const total = (name: string) => samples.filter((x) => x.name === name).reduce((a, x) => a + x.value, 0);
  return names.map((n) => {
    const count = total(`${n}_count`);
    return { what: `${app} ${n.replace(/^chainpipe_/, '')}`, count, meanMs: count ? (total(`${n}_sum`) / count) * 1000 : 0 };
  });
}

/** This process's CPU time (user + system) since `start` (a `process.cpuUsage()`), in µs. */
export function cpuSince(start: NodeJS.CpuUsage): number {
  const u = process.cpuUsage(start);
  return u.user + u.system;
}

/**
 * CPU the whole machine used (every process, /proc/stat's busy time) and each command's share
 * (/proc/<pid>/stat): a path whose work is spread over Postgres, Redis and the broker shows here
 * what this process's own CPU leaves out. Linux only; elsewhere every figure reads 0.
 */
export interface CpuSnapshot {
  busySeconds: number;
  byCommand: Map<string, number>;
}

/** USER_HZ, the unit of both files' times (100 on every Linux the project runs on). */
const CLOCK_TICKS = 100;

export function cpuSnapshot(): CpuSnapshot {
  const byCommand = new Map<string, number>();
  let stat: string;
  try {
    stat = readFileSync('/proc/stat', 'utf8');
  } catch {
    return { busySeconds: 0, byCommand };
  }
  // user nice system idle iowait irq softirq steal …: busy is all but idle and iowait.
  const f = stat.slice(0, stat.indexOf('\n')).trim().split(/\s+/).slice(1, 9).map(Number);
  const busySeconds = (f.reduce((a, b) => a + b, 0) - f[3] - f[4]) / CLOCK_TICKS;
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    let line: string;
    try {
      line = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue; // gone since the listing
    }
    // The command may hold spaces and parentheses: it ends at the last ')'. utime and stime
    // are the 14th and 15th fields, the 12th and 13th after it.
    const end = line.lastIndexOf(')');
    const comm = line.slice(line.indexOf('(') + 1, end);
    const after = line.slice(end + 2).split(' ');
    byCommand.set(comm, (byCommand.get(comm) ?? 0) + (Number(after[11]) + Number(after[12])) / CLOCK_TICKS);
  }
  return { busySeconds, byCommand };
}

/** CPU seconds used between two snapshots: the machine's, and by command (those that used 10 ms or more). */
export function cpuBetween(a: CpuSnapshot, b: CpuSnapshot): { busySeconds: number; byCommand: Record<string, number> } {
  const byCommand: Record<string, number> = {};
  // A process that started in between counts from 0, so a kernel worker's whole life may show:
  // only the commands that were there at the start count.
  for (const [comm, s] of b.byCommand) {
    const before = a.byCommand.get(comm);
    if (before !== undefined && s - before >= 0.01) byCommand[comm] = s - before;
  }
  return { busySeconds: b.busySeconds - a.busySeconds, byCommand };
}
