import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { createDb, type Knex } from '@chainpipe/db';
import { SecretBox } from '@chainpipe/runtime';
import {
  AppProcess,
  PrivateRedis,
  StreamerLoad,
  WebhookReceiver,
  bitcoinBlockItem,
  connectWs,
  createAppWithKey,
  elapsedMs,
  freePort,
  refusedUpgrade,
  waitFor,
  type TestWsClient,
} from '@chainpipe/testing';
import { faultEnv, recoveries } from './fault-env';

const SECRET = 'fault-suite-stream-secret';
/** The request deadline of every public app (REQUEST_TIMEOUT_MS): no answer may take longer. */
const DEADLINE_MS = 15_000;
const OUTAGE_MS = 30_000;

type Json = any;

/** What one probe of a public endpoint saw: its status (0: no answer) and how long it took. */
interface Probe {
  what: string;
  at: number;
  status: number;
  ms: number;
}

/**
 * Redis stopped for 30 s under traffic and started again empty (it keeps nothing on disk, as
 * the development Redis; a production one may lose its memory on failover), with the address
 * pipeline and the market-data apps that keep state in Redis as real processes on the suite's
 * own broker, Postgres and a private redis-server. While it is away: no 500 and no answer past
 * the request deadline (503 where the answer needs Redis), `/readyz` says so; once it is back
 * every app is ready again by itself, and a transaction streamed during the outage reaches the
 * WebSocket client and the webhook receiver.
 */
describe('faults: Redis restarted empty under traffic (real processes, private redis-server)', function () {
  this.timeout(300_000);
  let db: Knex;
  let redis: PrivateRedis;
  const apps = new Map<string, AppProcess>();
  const receiver = new WebhookReceiver();
  const app = { id: `fault-redis-${randomBytes(3).toString('hex')}`, key: '', keyId: '' };
  const block = bitcoinBlockItem(766393);
  // The first output address of the streamed block; the transactions paying it are those a push is due for.
  const address = block.tx[1].vout[0].scriptPubKey.address as string;
  const paying: number[] = block.tx.flatMap((t: Json, i: number) => (t.vout.some((o: Json) => o.scriptPubKey.address === address) ? [i] : []));
  let gatewayUrl = '';
  let marketUrl = '';
  let load: StreamerLoad | undefined;
  let client: TestWsClient | undefined;
  const probes: Probe[] = [];
  let probing = false;
  let probeLoop: Promise<void> | undefined;

  before(async function () {
    this.timeout(180_000);
    const env = faultEnv();
    redis = await PrivateRedis.start();
    db = createDb({ url: env.databaseUrl, poolMax: 2 });
    ({ key: app.key, keyId: app.keyId } = await createAppWithKey(db, { id: app.id }));
    await receiver.start();
    const webhookKey = randomBytes(32).toString('hex');
    await db('tx.app_configs').insert({ app_id: app.id, enable_ws: true, enable_webhook: true, webhook_url: receiver.url, webhook_secret_enc: new SecretBox(webhookKey).seal('fault-redis-hook') });
    await db('tx.monitored_addresses').insert({ app_id: app.id, chain_type: 'bitcoin', address });
    const common = { KAFKA_BROKERS: env.broker.brokers.join(','), DATABASE_URL: env.databaseUrl, REDIS_URL: redis.url, REDIS_KEY_PREFIX: 'fault-redis:', DB_POOL_MAX: '4', LOG_LEVEL: 'warn' };
    const [ingestPort, gatewayPort, marketPort] = await Promise.all([freePort(), freePort(), freePort()]);
    gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
    marketUrl = `http://127.0.0.1:${marketPort}`;
    const started = await Promise.all([
      AppProcess.start('apps/chain-ingest/src/main.ts', { ...common, STREAM_SECRET: SECRET, PORT: String(ingestPort) }),
      AppProcess.start('apps/chain-parser/src/main.ts', { ...common, CHAIN_PARSER_GROUP: 'fault-redis-parser' }),
      AppProcess.start('apps/tx-matcher/src/main.ts', { ...common, TX_MATCHER_GROUP: 'fault-redis-matcher' }),
      AppProcess.start('apps/tx-gateway/src/main.ts', { ...common, PORT: String(gatewayPort), WEBHOOK_SECRET_KEY: webhookKey, ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true', CHAIN_RPC_DEFAULT_BASE: 'http://127.0.0.1:9/rpc', TX_GATEWAY_PUSH_GROUP: 'fault-redis-push', WS_CONNECTION_LEASE_MS: '3000' }),
      AppProcess.start('apps/webhook-dispatcher/src/main.ts', { ...common, WEBHOOK_SECRET_KEY: webhookKey, ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true', WEBHOOK_DISPATCHER_GROUP: 'fault-redis-dispatcher' }),
      AppProcess.start('apps/market-gateway/src/main.ts', { ...common, PORT: String(marketPort) }),
      AppProcess.start('apps/price-writer/src/main.ts', { ...common, PRICE_WRITER_GROUP: 'fault-redis-writer' }),
      AppProcess.start('apps/kline-aggregator/src/main.ts', { ...common, KLINE_AGGREGATOR_GROUP: 'fault-redis-kline' }),
    ]);
    for (const a of started) apps.set(a.entry.split('/')[1], a);
    load = new StreamerLoad({ url: `http://127.0.0.1:${ingestPort}`, secret: SECRET, concurrency: 1, pauseMs: 300, firstHeight: 7_000_000 });
  });

  afterEach(async function () {
    probing = false;
    await probeLoop;
    await load?.stop();
    if (this.currentTest?.state !== 'failed') return;
    for (const [name, a] of apps) {
      const file = path.join(os.tmpdir(), `fault-redis-${name}.log`);
      writeFileSync(file, a.process.output());
      console.log(`    ${name} output: ${file}`);
    }
  });

  after(async () => {
    await client?.close();
    const codes: Record<string, number | string> = {};
    for (const [name, a] of apps) {
      const output = () => a.process.output();
      const log = output();
      codes[name] = await a.stop();
      if (codes[name] !== 0) writeFileSync(path.join(os.tmpdir(), `fault-redis-${name}.log`), log + output());
    }
    await receiver.stop();
    await redis?.destroy();
    await db?.destroy();
    expect(Object.values(codes).every((c) => c === 0), `every app shuts down cleanly: ${JSON.stringify(codes)}`).to.equal(true);
  });

  const wsUrl = () => `${gatewayUrl.replace('http', 'ws')}/tx/api/v1/transaction/ws`;
  const timed = async (what: string, call: () => Promise<number>) => {
    const at = Date.now();
    const status = await call().catch(() => 0);
    probes.push({ what, at, status, ms: Date.now() - at });
  };
  const fetchStatus = (url: string, init: RequestInit = {}) =>
    fetch(url, { ...init, signal: AbortSignal.timeout(DEADLINE_MS + 5_000) }).then(async (r) => {
      await r.arrayBuffer();
      return r.status;
    });
  /** A client's requests the whole time: one that needs only Postgres, and ones that need Redis. */
  function startProbes() {
    probing = true;
    const headers = { 'x-api-key': app.key, 'content-type': 'application/json' };
    probeLoop = (async () => {
      while (probing) {
        await Promise.all([
          timed('search', () => fetchStatus(`${gatewayUrl}/tx/api/v1/transfers/search`, { method: 'POST', headers, body: JSON.stringify({ address, chain_type: 'bitcoin', limit: 1 }) })),
          timed('pool trades', () => fetchStatus(`${gatewayUrl}/tx/api/v1/dex-pools/${address}/trades?chain_type=bitcoin&chain_id=1`, { headers })),
          timed('ws handshake', async () => {
            const refused = await Promise.race([refusedUpgrade(wsUrl(), { 'x-api-key': app.key, 'x-resendduration': '0' }).then((r) => r.status), new Promise<number>((r) => setTimeout(() => r(0), DEADLINE_MS + 5_000))]).catch(() => 101);
            return refused;
          }),
          timed('latest quotes', () => fetchStatus(`${marketUrl}/price/api/v1/quotes/latest?ids=1&fiat=USD`, { headers })),
        ]);
        await new Promise((r) => setTimeout(r, 250));
      }
    })();
  }

  const pushedHashes = () => new Set(client!.received.filter((m: Json) => m.type === 'transaction').map((m: Json) => m.data.txhash as string));
  const hookedHashes = () => new Set(receiver.bodies<Json[]>().flatMap((b) => b.map((t) => t.txHash as string)));

  it('503 and unready while Redis is away, never a 500 or a held request; ready again by itself; what was streamed meanwhile is delivered', async () => {
    client = await connectWs(wsUrl(), { 'x-api-key': app.key, 'x-resendduration': '600' });
    await client.next((m) => m.type === 'connected');
    load!.start();
    await load!.waitAcked(3);
    // Before the outage the pipeline delivers on both channels.
    const firstExpected = load!.acknowledged.slice(0, 1).flatMap((d) => paying.map((i) => d.txids[i]));
    await waitFor(() => firstExpected.every((h) => pushedHashes().has(h) && hookedHashes().has(h)), { timeoutMs: 60_000, what: 'the first block pushed and posted' });
    startProbes();
    await new Promise((r) => setTimeout(r, 1_000));

    await redis.stop();
    const stopped = Date.now();
    const needRedis = ['tx-gateway', 'tx-matcher', 'market-gateway', 'price-writer', 'kline-aggregator'];
    await Promise.all(
      needRedis.map(async (name) => {
        await waitFor(async () => (await apps.get(name)!.probes()).ready === 503, { timeoutMs: 20_000, intervalMs: 200, what: `${name} /readyz 503 without Redis` });
        recoveries.push({ fault: 'Redis down', what: `stop to ${name} /readyz 503`, ms: elapsedMs(stopped) });
      }),
    );
    const duringOutage = Date.now();
    await waitFor(() => load!.acknowledged.some((d) => d.at > duringOutage), { timeoutMs: 20_000, what: 'a block acknowledged while Redis is away' });
    for (const name of ['chain-ingest', 'chain-parser', 'webhook-dispatcher']) {
      expect((await apps.get(name)!.probes()).ready, `${name} needs no Redis to work: ready`).to.equal(200);
    }
    await new Promise((r) => setTimeout(r, Math.max(0, stopped + OUTAGE_MS - Date.now())));
    const streamedDuring = load!.acknowledged.filter((d) => d.at > stopped);

    await redis.start();
    const started = Date.now();
    await Promise.all(
      [...apps].map(async ([name, a]) => {
        await waitFor(async () => (await a.probes()).ready === 200, { timeoutMs: 60_000, intervalMs: 200, what: `${name} ready again after Redis is back` });
        recoveries.push({ fault: 'Redis restarted empty', what: `start to ${name} /readyz 200`, ms: elapsedMs(started) });
      }),
    );
    await waitFor(() => probes.some((p) => p.what === 'pool trades' && p.at > started && p.status === 200), { timeoutMs: 30_000, what: 'pool trades answered again' });
    await waitFor(() => probes.some((p) => p.what === 'ws handshake' && p.at > started && p.status === 101), { timeoutMs: 30_000, what: 'a WebSocket handshake accepted again' });
    probing = false;
    await probeLoop;

    // Every answer: never a 500, never past the deadline; 503 where the answer needs Redis.
    const bad = probes.filter((p) => p.status === 0 || p.status >= 500 && p.status !== 503 || p.ms > DEADLINE_MS);
    expect(bad.map((p) => `${p.what} ${p.status} in ${p.ms} ms`), 'no 500, no answer past the deadline').to.deep.equal([]);
    const inOutage = (p: Probe) => p.at > duringOutage && p.at + p.ms < started;
    for (const what of ['pool trades', 'ws handshake']) {
      const seen = probes.filter((p) => p.what === what && inOutage(p));
      expect(seen.length, `${what} probed during the outage`).to.be.greaterThan(5);
      expect([...new Set(seen.map((p) => p.status))], `${what} while Redis is away`).to.deep.equal([503]);
    }
    expect([...new Set(probes.filter((p) => p.what === 'search' && inOutage(p)).map((p) => p.status))], 'a search needs no Redis').to.deep.equal([200]);

    // A transaction streamed while Redis was away reaches the client (same connection) and the receiver.
    expect(streamedDuring.length, 'blocks acknowledged during the outage').to.be.greaterThan(0);
    const expected = streamedDuring.flatMap((d) => paying.map((i) => d.txids[i]));
    await waitFor(() => expected.every((h) => pushedHashes().has(h)), { timeoutMs: 60_000, what: () => `every transaction streamed during the outage pushed (${expected.filter((h) => !pushedHashes().has(h)).length} of ${expected.length} missing)` });
    recoveries.push({ fault: 'Redis restarted empty', what: 'start to the outage transactions pushed', ms: elapsedMs(started) });
    await waitFor(() => expected.every((h) => hookedHashes().has(h)), { timeoutMs: 60_000, what: () => `every transaction streamed during the outage posted (${expected.filter((h) => !hookedHashes().has(h)).length} missing)` });
    const seenIngest = load!.deliveries.filter((d) => d.at > stopped).map((d) => d.status);
    expect(seenIngest.filter((s) => s !== 200), 'chain-ingest takes blocks all through the outage').to.deep.equal([]);
  });
});
