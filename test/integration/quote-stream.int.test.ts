import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { QuoteStore } from '@chainpipe/price-store';
import { createRedis } from '@chainpipe/redis';
import { createRegistryTopics, freePort, spawnTs, stopProcess, testEnv, uniquePrefix, waitFor, waitReady, type RunningProcess } from '@chainpipe/testing';

/**
 * The quote stream against a slow provider (the ChangeNOW stand-in holding its estimates, next to
 * a prompt THORChain stand-in):
 * the per-channel timeout, heartbeats on a quiet stream, and a client that hangs up cancelling
 * the upstream call. Gateway and simulator run as processes.
 */
describe('quote stream: timeouts, heartbeats, client disconnect (gateway and upstream-sim processes)', function () {
  this.timeout(120_000);
  const env = testEnv();
  const procs: RunningProcess[] = [];
  let sim = '';
  const redisPrefix = `qs-${randomBytes(3).toString('hex')}:`;
  let gateway = '';
  const query = 'src_token_id=101&dst_token_id=1001&amount_in=100000000000000000&slippage=0.01';

  const start = async (entry: string, extra: Record<string, string>, port: number) => {
    const ops = await freePort();
    const p = spawnTs(entry, { ...extra, OPS_PORT: String(ops), PORT: String(port), LOG_LEVEL: 'error' });
    procs.push(p);
    await waitReady(p, ops, 60_000);
  };
  const delay = (ms: number) => fetch(`${sim}/sim/changenow/delay`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ms }) });
  const stats = async () => (await (await fetch(`${sim}/sim/changenow/stats`)).json()) as { estimates: number; abandoned: number };

  before(async () => {
    const prefix = uniquePrefix('qs');
    await createRegistryTopics(prefix);
    const [simPort, gwPort] = await Promise.all([freePort(), freePort()]);
    sim = `http://127.0.0.1:${simPort}`;
    gateway = `http://127.0.0.1:${gwPort}`;
    await start('apps/upstream-sim/src/main.ts', {}, simPort);
    // a fresh ETH price for the order's minimum amount check
    const redis = createRedis({ url: env.redisUrl, keyPrefix: redisPrefix });
    await new QuoteStore(redis).writeLatest([{ kind: 'crypto', source: 'test', external_id: '1027', symbol: 'ETH', name: 'Ethereum', as_of: Date.now(), fetched_at: Date.now(), usd: { price: 2000 } } as never]);
    await redis.quit();
    await start(
      'apps/aggregator-gateway/src/main.ts',
      {
        KAFKA_BROKERS: env.kafkaBrokers.join(','), KAFKA_TOPIC_PREFIX: prefix, DATABASE_URL: env.databaseUrl, REDIS_URL: env.redisUrl,
        CHANGENOW_API_URL: `${sim}/changenow`, THORNODE_API_URL: `${sim}/thornode`, QUOTE_UPSTREAM_TIMEOUT_MS: '800', QUOTE_HEARTBEAT_MS: '150',
        ORDER_UPSTREAM_TIMEOUT_MS: '800', REDIS_KEY_PREFIX: redisPrefix,
      },
      gwPort,
    );
  });
  after(async () => {
    for (const p of procs.reverse()) expect(await stopProcess(p), 'clean exit').to.equal(0);
  });

  it('a channel past the upstream timeout gets an error event, then done; heartbeats keep the quiet stream open', async () => {
    await delay(3000);
    const started = Date.now();
    const res = await fetch(`${gateway}/api/v2/quote/stream?${query}`, { headers: { accept: 'text/event-stream' } });
    expect(res.headers.get('content-type')).to.equal('text/event-stream; charset=utf-8');
    expect(res.headers.get('x-accel-buffering')).to.equal('no');
    const text = await res.text();
    const elapsed = Date.now() - started;
    expect(elapsed, 'ends at the timeout, not when the provider answers').to.be.lessThan(2500);
    expect(text).to.contain('event: error\ndata: {"channel_id":1,"msg":"quote service timed out"}\n\n');
    // the other channel (THORChain) is not held up by the slow one
    expect(text).to.match(/event: channel\ndata: \{"channel_id":2,/);
    expect(text.endsWith('event: done\ndata: {}\n\n')).to.equal(true);
    expect(text.match(/^: heartbeat$/gm)?.length ?? 0).to.be.greaterThan(1);
  });

  it('closing the connection cancels the upstream call still running', async () => {
    await delay(5000);
    const before = await stats();
    const controller = new AbortController();
    const res = await fetch(`${gateway}/api/v2/quote/stream?${query}`, { headers: { accept: 'text/event-stream' }, signal: controller.signal });
    expect(res.status).to.equal(200);
    await waitFor(async () => (await stats()).estimates > before.estimates, { what: 'the gateway asked the provider' });
    controller.abort();
    const after = await waitFor(async () => {
      const s = await stats();
      return s.abandoned > before.abandoned ? s : undefined;
    }, { timeoutMs: 3000, what: 'the provider saw its caller hang up (well before its 5 s answer)' });
    expect(after.abandoned).to.equal(before.abandoned + 1);
  });

  it('order creation while the channel is slower than the upstream timeout: 502 quote service timed out', async () => {
    await delay(3000);
    const res = await fetch(`${gateway}/api/v1/integrator/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        src_token_id: 101, dst_token_id: 1001, amount_in: '100000000000000000', dst_address: 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4', chosen_channel_id: 1,
        slippage: 0.01, main_channel_estimated_out_amount: '396806', min_acceptable_out_amount: '392837', channels: [{ channel_id: 1, estimated_out_str: '396806' }],
      }),
    });
    expect({ status: res.status, body: await res.json() }).to.deep.equal({ status: 502, body: { code: 502, msg: 'quote service timed out', data: null } });
  });

  it('prompt providers: a channel event each, then done; POST answers the same', async () => {
    await delay(0);
    for (const init of [
      { method: 'GET', url: `${gateway}/api/v2/quote/stream?${query}` },
      { method: 'POST', url: `${gateway}/api/v2/quote/stream`, body: JSON.stringify({ src_token_id: 101, dst_token_id: 1001, amount_in: '100000000000000000', slippage: 0.01 }) },
    ]) {
      const res = await fetch(init.url, { method: init.method, headers: { accept: 'text/event-stream', 'content-type': 'application/json' }, body: init.body });
      const text = await res.text();
      const events = [...text.matchAll(/^event: (\w+)$/gm)].map((m) => m[1]);
      expect(events, init.method).to.deep.equal(['channel', 'channel', 'done']);
    }
  });

  it('every channel failing before the stream begins: the pre-stream 502 of the spec, unavailable or timed out', async () => {
    const prefix = uniquePrefix('qs502');
    await createRegistryTopics(prefix);
    // A provider that accepts connections and never answers, and a port nobody listens on.
    const silent = http.createServer(() => undefined);
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', () => r()));
    const closed = await freePort();
    const common = { KAFKA_BROKERS: env.kafkaBrokers.join(','), KAFKA_TOPIC_PREFIX: prefix, DATABASE_URL: env.databaseUrl, REDIS_URL: env.redisUrl, REDIS_KEY_PREFIX: redisPrefix };
    const [refusedPort, silentPort] = await Promise.all([freePort(), freePort()]);
    await start('apps/aggregator-gateway/src/main.ts', { ...common, CHANGENOW_API_URL: `http://127.0.0.1:${closed}/changenow`, THORNODE_API_URL: `http://127.0.0.1:${closed}/thornode` }, refusedPort);
    const silentAt = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
    // Both channels time out (300 ms) well before the stream would begin on its own (5 s).
    await start('apps/aggregator-gateway/src/main.ts', { ...common, CHANGENOW_API_URL: `${silentAt}/changenow`, THORNODE_API_URL: `${silentAt}/thornode`, QUOTE_UPSTREAM_TIMEOUT_MS: '300', QUOTE_HEARTBEAT_MS: '5000' }, silentPort);
    try {
      for (const [port, msg] of [[refusedPort, 'quote service unavailable'], [silentPort, 'quote service timed out']] as const) {
        const res = await fetch(`http://127.0.0.1:${port}/api/v2/quote/stream?${query}`, { headers: { accept: 'text/event-stream' } });
        expect({ status: res.status, type: res.headers.get('content-type'), body: await res.json() }).to.deep.equal({ status: 502, type: 'application/json; charset=utf-8', body: { code: 502, msg, data: null } });
      }
    } finally {
      silent.closeAllConnections();
      silent.close();
    }
  });
});
