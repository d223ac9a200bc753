import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { TOPICS } from '@chainpipe/contracts';
import { createDb, type Knex } from '@chainpipe/db';
import { AppProcess, StreamerLoad, bitcoinBlockItem, connectWs, createAppWithKey, freePort, readTopicToEnd, waitFor, type TestWsClient } from '@chainpipe/testing';
import { faultEnv, recoveries } from './fault-env';

const SECRET = 'fault-suite-stream-secret';

/**
 * WebSocket delivery through gateway restarts and rolls (the whole address pipeline as real
 * processes on the suite's own broker and Postgres, a streamer posting blocks the whole time):
 * every push tx-matcher wrote to tx.push.v1 for the application reaches its client, which
 * reconnects after each close as a client does, also what was matched while no gateway ran.
 */
describe('faults of WebSocket delivery: gateway restarts and rolls under load', function () {
  // Each step has its own bound (named when it fails); this is their sum on a loaded machine
  // (the CI runs this suite beside the integration suites of the other Kafka line).
  this.timeout(540_000);
  let db: Knex;
  let ingest: AppProcess;
  let parser: AppProcess;
  let matcher: AppProcess;
  const gateways: { app: AppProcess; url: string }[] = [];
  const clients: TestWsClient[] = [];
  let load: StreamerLoad | undefined;
  const app = { id: `fault-ws-${randomBytes(3).toString('hex')}`, key: '' };
  const redisPrefix = `fault-ws-${randomBytes(3).toString('hex')}:`;
  let common: Record<string, string>;

  async function startGateway(): Promise<{ app: AppProcess; url: string }> {
    const port = await freePort();
    const gw = {
      app: await AppProcess.start('apps/tx-gateway/src/main.ts', {
        ...common,
        PORT: String(port),
        WEBHOOK_SECRET_KEY: randomBytes(32).toString('hex'),
        CHAIN_RPC_DEFAULT_BASE: 'http://127.0.0.1:9/rpc',
        TX_GATEWAY_SESSION_TIMEOUT_MS: '6000',
      }),
      url: `ws://127.0.0.1:${port}/tx/api/v1/transaction/ws`,
    };
    gateways.push(gw);
    return gw;
  }

  async function stopGateway(gw: { app: AppProcess }): Promise<void> {
    gateways.splice(gateways.indexOf(gw as (typeof gateways)[number]), 1);
    expect(await gw.app.stop(), 'clean shutdown').to.equal(0);
  }

  async function open(url: string): Promise<TestWsClient> {
    const c = await connectWs(url, { 'x-api-key': app.key, 'x-resendduration': '600' });
    clients.push(c);
    await c.next((m) => m.type === 'connected');
    return c;
  }

  /**
   * The client's socket closed (the gateway it was on stopped), within 60 s. A socket the gateway
   * already cut (keep-alive on a starved machine) has emitted its `close` before this is asked.
   */
  const closeOf = (c: TestWsClient) =>
    new Promise<void>((resolve, reject) => {
      if (c.ws.readyState === c.ws.CLOSED) return resolve();
      const timer = setTimeout(() => reject(new Error('the client socket did not close within 60 s of its gateway stopping')), 60_000);
      c.ws.once('close', () => {
        clearTimeout(timer);
        resolve();
      });
    });

  const received = () => new Set(clients.flatMap((c) => c.received.filter((m: any) => m.type === 'transaction').map((m: any) => m.id as string)));

  before(async function () {
    this.timeout(180_000);
    const env = faultEnv();
    db = createDb({ url: env.databaseUrl, poolMax: 2 });
    app.key = (await createAppWithKey(db, { id: app.id })).key;
    // The first output address of the streamed block: every delivery has transactions of it.
    const address = bitcoinBlockItem(766393).tx[1].vout[0].scriptPubKey.address as string;
    await db('tx.monitored_addresses').insert({ app_id: app.id, chain_type: 'bitcoin', address });
    common = {
      KAFKA_BROKERS: env.broker.brokers.join(','),
      DATABASE_URL: env.databaseUrl,
      REDIS_URL: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379/0',
      REDIS_KEY_PREFIX: redisPrefix,
      LOG_LEVEL: 'warn',
    };
    const ingestPort = await freePort();
    [ingest, parser, matcher] = await Promise.all([
      AppProcess.start('apps/chain-ingest/src/main.ts', { ...common, STREAM_SECRET: SECRET, PORT: String(ingestPort) }),
      AppProcess.start('apps/chain-parser/src/main.ts', { ...common, CHAIN_PARSER_GROUP: 'fault-ws-parser' }),
      AppProcess.start('apps/tx-matcher/src/main.ts', { ...common, TX_MATCHER_GROUP: 'fault-ws-matcher' }),
    ]);
    load = new StreamerLoad({ url: `http://127.0.0.1:${ingestPort}`, secret: SECRET, concurrency: 2, pauseMs: 200, firstHeight: 5_000_000 });
  });

  after(async () => {
    await load?.stop();
    await Promise.all(clients.map((c) => c.close()));
    const codes = [];
    for (const gw of [...gateways]) codes.push(await gw.app.stop());
    for (const a of [ingest, parser, matcher]) if (a) codes.push(await a.stop());
    await db?.destroy();
    expect(codes.every((c) => c === 0), 'every app shuts down cleanly').to.equal(true);
  });

  it('a roll to a new copy, then a restart with no copy running for a while: the client gets every push', async () => {
    const first = await startGateway();
    const client = await open(first.url);
    load!.start();
    await load!.waitAcked(5);
    await waitFor(() => received().size > 0, { timeoutMs: 60_000, what: 'a live push' });

    // Roll: a new copy starts, the old one stops; the client reconnects to the new one.
    const second = await startGateway();
    const closed = closeOf(client);
    await stopGateway(first);
    await closed;
    await open(second.url);
    await load!.waitAcked(5);

    // Restart: no copy runs while blocks keep being matched.
    const gone = closeOf(clients[clients.length - 1]);
    await stopGateway(second);
    await gone;
    await load!.waitAcked(5);
    const t0 = Date.now();
    const third = await startGateway();
    await open(third.url);
    recoveries.push({ fault: 'tx-gateway restart', what: 'start to ready (/readyz 200)', ms: Date.now() - t0 });
    await load!.waitAcked(5);
    const deliveries = await load!.stop();
    expect(deliveries.filter((d) => d.status === 200).length).to.be.greaterThan(15);

    // Every push matched for the application, whenever it was matched.
    const { brokers } = faultEnv().broker;
    let expected = new Set<string>();
    await waitFor(
      async () => {
        const pushes = (await readTopicToEnd(brokers, TOPICS.txPush.name)).map((m) => JSON.parse(m.value!.toString()) as { app_id: string; message_id: string; ws: boolean });
        expected = new Set(pushes.filter((p) => p.app_id === app.id && p.ws).map((p) => p.message_id));
        const acked = new Set(deliveries.filter((d) => d.status === 200).map((d) => d.txids[1]));
        return expected.size >= acked.size;
      },
      { timeoutMs: 60_000, intervalMs: 1_000, what: 'a push for every acknowledged delivery' },
    );
    await waitFor(() => [...expected].every((id) => received().has(id)), {
      timeoutMs: 60_000,
      what: () => `every push delivered (${[...expected].filter((id) => !received().has(id)).length} of ${expected.size} missing)`,
    });
  });
});
