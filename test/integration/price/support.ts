import { expect } from 'chai';
import { ApiKeyRepository, type Knex } from '@chainpipe/db';
import { createAppWithKey, documentAssertion, freePort, jsonOrUndefined, parsePrometheusText, spawnTs, stopProcess, testEnv, waitReady, type RunningProcess } from '@chainpipe/testing';

/** Test support of the token price suites: keys, a spawned gateway, a fetch wrapper. Asserts nothing of its own. */

export interface Reply {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

export async function createTestKey(db: Knex, label: string, opts: { revoked?: boolean; role?: 'customer' | 'operator' } = {}): Promise<string> {
  const app = await createAppWithKey(db, { id: `${testEnv().runId}-${label}`, name: `price test ${label}`, label: 'test', role: opts.role });
  if (opts.revoked) await new ApiKeyRepository(db).revokeKey(app.keyId);
  return app.key;
}

export interface Started {
  proc: RunningProcess;
  base: string;
  opsBase: string;
}

/** Starts an app's main.ts as a real process on free ports and waits for its /readyz. */
export async function startApp(entry: string, env: Record<string, string>, opts: { publicPort?: boolean } = {}): Promise<Started> {
  const port = await freePort();
  const opsPort = await freePort();
  const proc = spawnTs(entry, { KAFKA_BROKERS: testEnv().kafkaBrokers.join(','), ...(opts.publicPort === false ? {} : { PORT: String(port) }), OPS_PORT: String(opsPort), ...env });
  await waitReady(proc, opsPort, 90_000);
  return { proc, base: `http://127.0.0.1:${port}`, opsBase: `http://127.0.0.1:${opsPort}` };
}

/**
 * A fetch wrapper for one app. Every answer is also checked against the API document the app
 * serves (`/openapi.json`): an undocumented status or a body off its schema fails the call.
 */
export function client(base: () => string, defaultKey: () => string) {
  const matchesDocument = documentAssertion(base);
  return async (method: string, path: string, opts: { key?: string | null; raw?: string; body?: unknown; headers?: Record<string, string> } = {}): Promise<Reply> => {
    const headers: Record<string, string> = { ...opts.headers };
    const key = opts.key === undefined ? defaultKey() : opts.key;
    if (key !== null) headers['x-api-key'] = key;
    let body = opts.raw;
    if (opts.body !== undefined) body = JSON.stringify(opts.body);
    if (body !== undefined) headers['content-type'] ??= 'application/json';
    const res = await fetch(base() + path, { method, headers, body });
    const text = await res.text();
    const parsed = jsonOrUndefined(text);
    await matchesDocument(method, path, res.status, res.headers.get('content-type'), parsed, text);
    return { status: res.status, headers: res.headers, body: parsed, text };
  };
}

/** The price envelope of an error: HTTP status, business code, message, `data` an empty string. */
export function expectPriceError(r: Reply, status: number, code: number, msg: string | RegExp): void {
  expect(r.status, r.text).to.equal(status);
  expect(Object.keys(r.body).sort()).to.deep.equal(['code', 'data', 'msg']);
  expect(r.body.code).to.equal(code);
  expect(r.body.data).to.equal('');
  if (typeof msg === 'string') expect(r.body.msg).to.equal(msg);
  else expect(r.body.msg).to.match(msg);
}

export function expectOk(r: Reply): any {
  expect(r.status, r.text).to.equal(200);
  expect(r.body.code, r.text).to.equal(0);
  expect(r.body.msg).to.equal('success');
  return r.body.data;
}

/** The value of one sample of an app's /metrics (undefined when absent). */
export async function metricValue(opsBase: string, name: string, labels: Record<string, string> = {}): Promise<number | undefined> {
  const text = await (await fetch(`${opsBase}/metrics`)).text();
  const sample = parsePrometheusText(text).samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  return sample?.value;
}

/** A simulator control call (`/sim/...`); throws unless it answers 200. */
export async function simControl(simBase: string, method: 'PUT' | 'DELETE', path: string, body?: unknown): Promise<void> {
  const res = await fetch(simBase + path, { method, headers: body ? { 'content-type': 'application/json' } : {}, body: body ? JSON.stringify(body) : undefined });
  if (res.status !== 200) throw new Error(`sim control ${method} ${path}: ${res.status} ${await res.text()}`);
}

/**
 * The candlestick pipeline before the gateway, each app a process on the test's topics and Redis
 * prefix: upstream-sim (the CoinGecko stand-in, ticking every 100 ms) → market-ingester →
 * kline-aggregator, and with them whatever `alongside` starts, given the sim and the environment
 * a market-gateway of the same test needs.
 */
export async function startCandlestickPipeline<G>(opts: {
  prefix: string;
  redisPrefix: string;
  sim?: Record<string, string>;
  ingester?: Record<string, string>;
  aggregator?: Record<string, string>;
  /** Started at the same time as the ingester and the aggregator (the gateway, say). */
  alongside: (sim: Started, common: Record<string, string>) => Promise<G>;
}): Promise<{ sim: Started; ingester: Started; aggregator: Started; alongside: G }> {
  const env = testEnv();
  const common = { DATABASE_URL: env.databaseUrl, REDIS_URL: env.redisUrl, REDIS_KEY_PREFIX: opts.redisPrefix, KAFKA_TOPIC_PREFIX: opts.prefix, MARKET_API_KEY: 'test-cg-key' };
  const sim = await startApp('apps/upstream-sim/src/main.ts', { SIM_OHLCV_TICK_MS: '100', SIM_OHLCV_PING_MS: '1000', ...opts.sim });
  const [ingester, aggregator, alongside] = await Promise.allSettled([
    startApp('apps/market-ingester/src/main.ts', {
      ...common,
      MARKET_WS_URL: `${sim.base.replace('http', 'ws')}/v1`,
      KLINE_MARKET_API_URL: `${sim.base}/coingecko/api/v3`,
      MARKET_RECONNECT_INITIAL_MS: '100',
      MARKET_STATUS_INTERVAL_MS: '200',
      MARKET_POOLS_RESYNC_MS: '600000',
      MARKET_PING_MS: '1000',
      MARKET_INGESTER_GROUP: `${opts.prefix}market-ingester`,
      ...opts.ingester,
    }, { publicPort: false }),
    startApp('apps/kline-aggregator/src/main.ts', { ...common, KLINE_AGGREGATOR_GROUP: `${opts.prefix}kline-aggregator`, ...opts.aggregator }, { publicPort: false }),
    opts.alongside(sim, common),
  ]);
  if (ingester.status === 'rejected' || aggregator.status === 'rejected' || alongside.status === 'rejected') {
    // The caller gets none of them, so it cannot stop the ones that did start: stopped here.
    const started = [sim, ...[ingester, aggregator].flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []))];
    await Promise.all(started.map((a) => stopProcess(a.proc)));
    throw [ingester, aggregator, alongside].flatMap((r) => (r.status === 'rejected' ? [r.reason] : []))[0];
  }
  return { sim, ingester: ingester.value, aggregator: aggregator.value, alongside: alongside.value };
}
