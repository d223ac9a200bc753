import http from 'node:http';

/**
 * A strict reader of the Prometheus text exposition format (version 0.0.4): every line must be
 * a comment, `# HELP`, `# TYPE`, or a sample `name{labels} value [timestamp]`. Throws on the
 * first malformed line, so a test that parses /metrics proves a scraper would accept it.
 */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Exposition {
  types: Map<string, string>;
  help: Map<string, string>;
  samples: Sample[];
}

const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*';
const LABEL = '[a-zA-Z_][a-zA-Z0-9_]*';
const SAMPLE_RE = new RegExp(`^(${NAME})(?:\\{(.*)\\})?\\s+(\\S+)(?:\\s+(-?\\d+))?$`);
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

function parseLabels(text: string, line: number): Record<string, string> {
  const out: Record<string, string> = {};
  let i = 0;
  const re = new RegExp(`\\s*(${LABEL})="((?:[^"\\\\]|\\\\.)*)"\\s*(,|$)`, 'y');
  while (i < text.length) {
    re.lastIndex = i;
    const m = re.exec(text);
    if (!m) throw new Error(`line ${line}: malformed labels {${text}}`);
    out[m[1]] = m[2].replace(/\\n/g, '\n').replace(/\\"/g, '"').replace(/\\\\/g, '\\');
    i = re.lastIndex;
  }
  return out;
}

function parseValue(v: string, line: number): number {
  if (v === '+Inf') return Infinity;
  if (v === '-Inf') return -Infinity;
  // prom-client prints NaN as `Nan`; Prometheus reads NaN in any case (Go's ParseFloat).
  if (/^nan$/i.test(v)) return NaN;
  const n = Number(v);
  if (Number.isNaN(n)) throw new Error(`line ${line}: bad value ${v}`);
  return n;
}

export function parsePrometheusText(text: string): Exposition {
  const types = new Map<string, string>();
  const help = new Map<string, string>();
  const samples: Sample[] = [];
  text.split('\n').forEach((raw, idx) => {
    const line = idx + 1;
    if (raw.trim() === '') return;
    if (raw.startsWith('#')) {
      const m = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(raw);
      if (!m) return; // plain comment
      if (!new RegExp(`^${NAME}$`).test(m[2])) throw new Error(`line ${line}: bad metric name ${m[2]}`);
      if (m[1] === 'TYPE') {
        if (!TYPES.has(m[3])) throw new Error(`line ${line}: bad type ${m[3]}`);
        if (types.has(m[2])) throw new Error(`line ${line}: second TYPE for ${m[2]}`);
        types.set(m[2], m[3]);
      } else help.set(m[2], m[3]);
      return;
    }
    const m = SAMPLE_RE.exec(raw);
    if (!m) throw new Error(`line ${line}: malformed sample ${JSON.stringify(raw)}`);
    samples.push({ name: m[1], labels: m[2] ? parseLabels(m[2], line) : {}, value: parseValue(m[3], line) });
  });
  for (const s of samples) {
    const family = s.name.replace(/_(bucket|sum|count|total|created)$/, '');
    if (!types.has(s.name) && !types.has(family)) throw new Error(`sample ${s.name} has no TYPE line`);
  }
  return { types, help, samples };
}

/**
 * An app's metrics (its ops port's `/metrics`), parsed, read on a connection of its own. A pooled
 * keep-alive socket may be one the app already closed after its 5 s idle timeout: a bench that
 * keeps its thread busy for a second or more between two reads (building a step's bodies, say)
 * delays the pool's own timer that would have dropped it, and the read fails with "other side
 * closed" (it ended a pipeline run after two steps).
 */
export function scrapeMetrics(opsPort: number): Promise<Exposition> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port: opsPort, path: '/metrics', agent: false }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('error', reject);
        res.on('end', () => (res.statusCode === 200 ? resolve(parsePrometheusText(text)) : reject(new Error(`GET :${opsPort}/metrics answered ${res.statusCode}`))));
      })
      .on('error', reject);
  });
}
