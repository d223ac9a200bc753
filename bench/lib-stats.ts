import os from 'node:os';
import { parsePrometheusText } from '@chainpipe/testing';

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
  const { samples } = parsePrometheusText(await (await fetch(`http://127.0.0.1:${opsPort}/metrics`)).text());
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
