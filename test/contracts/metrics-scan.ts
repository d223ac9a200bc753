import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { createMetricsRegistry } from '@chainpipe/runtime';

/** One metric the code registers with prom-client. */
export interface RegisteredMetric {
  name: string;
  type: 'counter' | 'gauge' | 'histogram' | 'summary';
  labels: string[];
  help: string;
  /** Source file (repo-relative) of the registration. */
  file: string;
}

const ROOT = path.resolve(__dirname, '../..');
const CONSTRUCTOR = /new (Counter|Gauge|Histogram|Summary)\b/g;
const REGISTRATION = /new (Counter|Gauge|Histogram|Summary)(?:<[^>]*>)?\(\{\s*name:\s*'([a-z0-9_]+)',\s*help:\s*(?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)")/g;

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir)) {
    const p = path.join(dir, entry);
    if (statSync(p).isDirectory()) out.push(...sourceFiles(p));
    else if (p.endsWith('.ts')) out.push(p);
  }
  return out;
}

/**
 * Every metric the apps and libs register, read from their sources (`libs/* /src`, `apps/* /src`).
 * Each `new Counter|Gauge|Histogram|Summary` must be a literal registration this reads (name and
 * help written out): a metric whose name is computed fails the scan instead of escaping it.
 */
export function scanRegisteredMetrics(): RegisteredMetric[] {
  const metrics: RegisteredMetric[] = [];
  const dirs = ['libs', 'apps'].flatMap((top) => readdirSync(path.join(ROOT, top)).map((d) => path.join(ROOT, top, d, 'src')));
  for (const dir of dirs) {
    let files: string[];
    try {
      files = sourceFiles(dir);
    } catch {
      continue;
    }
    for (const file of files) {
      const text = readFileSync(file, 'utf8');
      const constructors = (text.match(CONSTRUCTOR) ?? []).length;
      if (!constructors) continue;
      const found = [...text.matchAll(REGISTRATION)];
      const rel = path.relative(ROOT, file);
      if (found.length !== constructors) throw new Error(`${rel}: ${constructors} metric constructors but ${found.length} literal registrations (name, then help)`);
      for (const m of found) {
        // The labels of this registration: the first labelNames before the next registration.
        const rest = text.slice(m.index! + m[0].length);
        const next = rest.search(CONSTRUCTOR);
        const own = next === -1 ? rest : rest.slice(0, next);
        const labelNames = /labelNames:\s*\[([^\]]*)\]/.exec(own.slice(0, own.indexOf('registers')));
        const labels = labelNames ? [...labelNames[1].matchAll(/'([a-z_]+)'/g)].map((l) => l[1]) : [];
        metrics.push({ name: m[2], type: m[1].toLowerCase() as RegisteredMetric['type'], labels, help: m[3] ?? m[4], file: rel });
      }
    }
  }
  return metrics;
}

/** The process and Node.js metrics prom-client adds to every app's registry, from a real one. */
export async function defaultMetricNames(): Promise<Map<string, string>> {
  const registry = createMetricsRegistry('scan');
  const json = await registry.getMetricsAsJSON();
  registry.clear();
  return new Map(json.map((m) => [m.name, String(m.type)]));
}

/** The metric names a PromQL expression (or a dashboard query) uses: `chainpipe_*` and `up`. */
export function metricNamesIn(expr: string): string[] {
  const names = new Set(expr.match(/\bchainpipe_[a-z0-9_]+/g) ?? []);
  if (/(^|[^a-z_])up\s*(\{|==|$)/.test(expr)) names.add('up');
  return [...names];
}

/** A name a query may use for a metric: histograms and summaries also by their series' suffixes. */
export function seriesNames(name: string, type: string): string[] {
  if (type === 'histogram') return [`${name}_bucket`, `${name}_sum`, `${name}_count`];
  if (type === 'summary') return [name, `${name}_sum`, `${name}_count`];
  return [name];
}

/** Name → type of every metric an app may expose: the scan and prom-client's defaults. */
export async function scannedMetricTypes(): Promise<Map<string, string>> {
  return new Map<string, string>([...scanRegisteredMetrics().map((m) => [m.name, m.type] as const), ...(await defaultMetricNames())]);
}
