import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { Registry } from 'prom-client';
import { channelAdapters } from '@chainpipe/aggregator';
import { loadContracts } from '@chainpipe/contracts';
import { createDb, type Knex } from '@chainpipe/db';
import { listen, type StartedServer } from '@chainpipe/http';
import { createRedis, type Redis } from '@chainpipe/redis';
import { createLogger, loadConfig } from '@chainpipe/runtime';
import { ManualClock, TEST_KEY_MNEMONIC, platformKeyEnv, simulatorUpstreamEnv, testEnv, waitFor } from '@chainpipe/testing';
import { createAggregatorGatewayApp } from '../../apps/aggregator-gateway/src/app';
import { aggregatorGatewayConfig } from '../../apps/aggregator-gateway/src/config';
import { quotesModule } from '../../apps/aggregator-gateway/src/quotes/module';

/**
 * The quote stream with the gateway's default settings (request deadline, heartbeat period and
 * upstream timeout as configured when nothing is set) against providers that accept the call and
 * never answer: the spec's 60 s `error` per channel, then `done`, with heartbeats on the way and
 * no 504 from the request deadline. The gateway's app runs in process on the real Postgres and
 * Redis with every timer on a manual clock, so the minute passes in no wall time.
 */
describe('quote stream with default settings: a silent channel gets the error event at 60 s, then done', function () {
  this.timeout(60_000);
  let db: Knex;
  let redis: Redis;
  let gateway: StartedServer | undefined;
  let silent: http.Server | undefined;
  const calls: { path: string; closed: boolean }[] = [];
  const clock = new ManualClock(Date.now());
  let base = '';

  before(async () => {
    const env = testEnv();
    silent = http.createServer((req) => {
      const call = { path: req.url ?? '', closed: false };
      calls.push(call);
      req.socket.on('close', () => (call.closed = true));
    });
    await new Promise<void>((resolve) => silent!.listen(0, '127.0.0.1', () => resolve()));
    const upstream = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
    // Every required setting (provider URLs and keys, deposit xpubs) as a deployment gives them, the
    // providers being the silent server; nothing else set, so the rest are the defaults.
    const config = loadConfig(aggregatorGatewayConfig, { ...simulatorUpstreamEnv(upstream), ...platformKeyEnv(TEST_KEY_MNEMONIC) });
    // the premise: these are the defaults of a gateway started without settings
    expect({ deadline: config.REQUEST_TIMEOUT_MS, heartbeat: config.QUOTE_HEARTBEAT_MS, upstream: config.QUOTE_UPSTREAM_TIMEOUT_MS }).to.deep.equal({ deadline: 15_000, heartbeat: 15_000, upstream: 60_000 });
    db = createDb({ url: env.databaseUrl, poolMax: 4 });
    redis = createRedis({ url: env.redisUrl, keyPrefix: `qsd-${randomBytes(3).toString('hex')}:` });
    const logger = createLogger({ name: 'quote-stream-test', level: 'error' });
    const registry = new Registry();
    const quotes = quotesModule({
      db, redis, contracts: loadContracts(), adapters: channelAdapters(config), logger, registry, bodyLimitBytes: config.BODY_LIMIT_BYTES,
      upstreamTimeoutMs: config.QUOTE_UPSTREAM_TIMEOUT_MS, heartbeatMs: config.QUOTE_HEARTBEAT_MS, clock,
    });
    gateway = await listen(createAggregatorGatewayApp({ logger, registry, timeoutMs: config.REQUEST_TIMEOUT_MS, clock, modules: [quotes] }), 0, '127.0.0.1');
    base = `http://127.0.0.1:${gateway.address.port}`;
  });

  after(async () => {
    await gateway?.close();
    silent?.closeAllConnections();
    await new Promise((resolve) => silent?.close(resolve));
    await redis?.quit();
    await db?.destroy();
  });

  it('heartbeats from 15 s, both providers asked until 60 s, then an error event per channel and done', async () => {
    const answer = fetch(`${base}/api/v2/quote/stream?src_token_id=101&dst_token_id=1001&amount_in=100000000000000000&slippage=0.01`, { headers: { accept: 'text/event-stream' } });
    await waitFor(() => calls.length === 2, { what: 'both channels asked their provider' });
    expect(calls.map((c) => c.path.split('?')[0]).sort()).to.deep.equal(['/changenow/v2/exchange/estimated-amount', '/thornode/thorchain/quote/swap']);

    // 15 s: the request deadline of ordinary requests would answer 504 now; the stream begins instead
    await clock.advance(15_000);
    const res = await answer;
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.equal('text/event-stream; charset=utf-8');

    await clock.advance(44_999);
    expect(calls.map((c) => c.closed), 'both provider calls still running at 59.999 s').to.deep.equal([false, false]);
    const text = res.text();
    await clock.advance(1);
    const body = await text;
    await waitFor(() => calls.every((c) => c.closed), { what: 'the provider calls were given up' });

    const events = [...body.matchAll(/^event: (\w+)\ndata: (.*)$/gm)].map((m) => ({ event: m[1], data: JSON.parse(m[2]) as unknown }));
    expect(events.slice(0, 2)).to.have.deep.members([
      { event: 'error', data: { channel_id: 1, msg: 'quote service timed out' } },
      { event: 'error', data: { channel_id: 2, msg: 'quote service timed out' } },
    ]);
    expect(events.slice(2)).to.deep.equal([{ event: 'done', data: {} }]);
    // a heartbeat every 15 s once begun: at 30 s and 45 s at least, all before the errors
    const beforeErrors = body.slice(0, body.indexOf('event: error'));
    expect(beforeErrors.match(/^: heartbeat$/gm)?.length ?? 0).to.be.at.least(2);
  });
});
