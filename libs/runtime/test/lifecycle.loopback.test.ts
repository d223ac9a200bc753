import { Writable } from 'node:stream';
import { expect } from 'chai';
import { Registry } from 'prom-client';
import { Lifecycle, createLogger, type HealthReport } from '@chainpipe/runtime';
import { ManualClock } from '@chainpipe/testing';

function sink() {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      for (const l of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(l));
      cb();
    },
  });
  return { lines, logger: createLogger({ name: 't', destination: stream }) };
}

describe('Lifecycle', () => {
  it('stops components in reverse order, once, and exits 0; readiness turns false first', async () => {
    const { logger } = sink();
    const order: string[] = [];
    let readyDuringStop: boolean | undefined;
    const exits: number[] = [];
    const lc = new Lifecycle({ logger, exit: (c) => exits.push(c) });
    lc.add({ name: 'db', stop: async () => void order.push('db') });
    lc.add({ name: 'consumer', stop: async () => void order.push('consumer') });
    lc.add({ name: 'http', stop: async () => { readyDuringStop = lc.readiness().ready; order.push('http'); } });
    lc.markStarted();
    expect(lc.readiness().ready).to.equal(true);
    await Promise.all([lc.shutdown('test'), lc.shutdown('again')]);
    expect(order).to.deep.equal(['http', 'consumer', 'db']);
    expect(readyDuringStop).to.equal(false);
    expect(exits).to.deep.equal([0]);
  });

  it('exits 1 after a crash or a failing stop, and still stops the rest', async () => {
    const { logger, lines } = sink();
    const exits: number[] = [];
    const stopped: string[] = [];
    const lc = new Lifecycle({ logger, exit: (c) => exits.push(c) });
    lc.add({ name: 'a', stop: async () => void stopped.push('a') });
    lc.add({ name: 'b', stop: async () => { throw new Error('boom'); } });
    await lc.shutdown('crash', new Error('consumer died'));
    expect(stopped).to.deep.equal(['a']);
    expect(exits).to.deep.equal([1]);
    expect(lines.some((l) => l.msg === 'component_stop_failed' && l.component === 'b')).to.equal(true);
  });

  it('exits 1 the instant a stop outlives the deadline, and logs how long each stop took', async () => {
    const { logger, lines } = sink();
    const clock = new ManualClock();
    const exits: number[] = [];
    const lc = new Lifecycle({ logger, exit: (c) => exits.push(c), shutdownTimeoutMs: 25_000, clock });
    lc.add({ name: 'stuck', stop: () => clock.sleep(60_000) });
    lc.add({ name: 'slow', stop: () => clock.sleep(4_000) });
    void lc.shutdown('test');
    await clock.advance(24_999);
    expect(exits).to.deep.equal([]);
    expect(lines.find((l) => l.msg === 'component_stopped')).to.include({ component: 'slow', ms: 4_000 });
    await clock.advance(1);
    expect(exits).to.deep.equal([1]);
    expect(lines.some((l) => l.msg === 'shutdown_deadline_exceeded')).to.equal(true);
  });

  it('aggregates component health and readiness: degraded is alive but not ready, error fails liveness', () => {
    const { logger } = sink();
    let consumerReady = false;
    let redis: HealthReport = { state: 'degraded', detail: 'reconnecting' };
    const lc = new Lifecycle({ logger, exit: () => undefined });
    lc.add({ name: 'redis', health: () => redis });
    lc.add({ name: 'consumer', health: () => 'ok', ready: () => consumerReady });
    lc.markStarted();
    expect(lc.health()).to.deep.equal({ state: 'degraded', components: { redis: { state: 'degraded', detail: 'reconnecting' }, consumer: { state: 'ok' } } });
    expect(lc.readiness()).to.deep.equal({ ready: false, components: { redis: false, consumer: false } });
    consumerReady = true;
    redis = { state: 'ok' };
    expect(lc.readiness()).to.deep.equal({ ready: true, components: { redis: true, consumer: true } });
    redis = { state: 'error', detail: 'gave up' };
    expect(lc.health().state).to.equal('error');
    expect(lc.readiness().ready).to.equal(false);
  });

  it('serves readiness as the chainpipe_ready gauge: 0 while /readyz answers 503, 1 while it answers 200', async () => {
    const { logger } = sink();
    let dbReady = false;
    const lc = new Lifecycle({ logger, exit: () => undefined });
    lc.add({ name: 'db', health: () => 'ok', ready: () => dbReady });
    const ops = await lc.serveOps({ host: '127.0.0.1', port: 0, registry: new Registry() });
    const scrape = async () => {
      const text = await (await fetch(`http://127.0.0.1:${ops.port}/metrics`)).text();
      return /^chainpipe_ready (\d)$/m.exec(text)?.[1];
    };
    try {
      lc.markStarted();
      expect(await scrape()).to.equal('0');
      dbReady = true;
      expect((await fetch(`http://127.0.0.1:${ops.port}/readyz`)).status).to.equal(200);
      expect(await scrape()).to.equal('1');
    } finally {
      await lc.shutdown('test');
    }
  });

  it('serves an app\'s own ops routes (any method) beside its three, and nothing else', async () => {
    const { logger } = sink();
    const lc = new Lifecycle({ logger, exit: () => undefined });
    const seen: string[] = [];
    const ops = await lc.serveOps({
      host: '127.0.0.1',
      port: 0,
      registry: new Registry(),
      routes: [{ matches: (path) => path.startsWith('/debug/'), handle: (req, res) => (seen.push(`${req.method} ${req.url}`), res.end('ok')) }],
    });
    const base = `http://127.0.0.1:${ops.port}`;
    try {
      expect(await (await fetch(`${base}/debug/ensure?x=1`, { method: 'POST' })).text()).to.equal('ok');
      expect(seen).to.deep.equal(['POST /debug/ensure?x=1']);
      expect((await fetch(`${base}/other`, { method: 'POST' })).status).to.equal(405);
      expect((await fetch(`${base}/other`)).status).to.equal(404);
      expect((await fetch(`${base}/healthz`)).status).to.be.oneOf([200, 503]);
    } finally {
      await lc.shutdown('test');
    }
  });
});

describe('logger', () => {
  it('writes JSON lines with the app name and never prints secrets it is handed', () => {
    const { logger, lines } = sink();
    logger.info({ msg: 'request', headers: { 'x-api-key': 'cpk_secret', 'content-secret-x': 'shh', host: 'h' }, config: { STREAM_SECRET: 'x' } });
    expect(lines[0]).to.include({ app: 't', msg: 'request', level: 'info' });
    expect(JSON.stringify(lines[0])).to.not.match(/cpk_secret|shh|"x"/);
    expect((lines[0].headers as Record<string, string>).host).to.equal('h');
  });
});
