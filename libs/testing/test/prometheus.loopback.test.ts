import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { Counter, Histogram, Registry } from 'prom-client';
import { parsePrometheusText, scrapeMetrics } from '@chainpipe/testing';

describe('Prometheus text parser', () => {
  it('reads what prom-client writes, labels with escapes included', async () => {
    const registry = new Registry();
    new Counter({ name: 'x_total', help: 'h', labelNames: ['a'], registers: [registry] }).inc({ a: 'q"uote\\' }, 3);
    new Histogram({ name: 'd_seconds', help: 'h', buckets: [1], registers: [registry] }).observe(0.5);
    const e = parsePrometheusText(await registry.metrics());
    expect(e.types.get('x_total')).to.equal('counter');
    expect(e.samples.find((s) => s.name === 'x_total')).to.deep.equal({ name: 'x_total', labels: { a: 'q"uote\\' }, value: 3 });
    expect(e.samples.find((s) => s.name === 'd_seconds_bucket' && s.labels.le === '+Inf')?.value).to.equal(1);
  });

  it('rejects malformed exposition', () => {
    expect(() => parsePrometheusText('# TYPE a counter\na{b="c} 1')).to.throw(/malformed/);
    expect(() => parsePrometheusText('# TYPE a counter\na one')).to.throw();
    expect(() => parsePrometheusText('b 1')).to.throw(/no TYPE/);
    expect(() => parsePrometheusText('# TYPE a bogus\n')).to.throw(/bad type/);
  });
});

describe('scrapeMetrics', () => {
  let server: Server;
  let connections = 0;
  let status = 200;
  const registry = new Registry();
  new Counter({ name: 'scraped_total', help: 'h', registers: [registry] }).inc(7);

  before(async () => {
    server = createServer(async (_req, res) => {
      res.writeHead(status, { 'content-type': registry.contentType });
      res.end(status === 200 ? await registry.metrics() : 'no');
    });
    // An idle connection is closed almost at once, as an app's ops server does after 5 s.
    server.keepAliveTimeout = 20;
    server.on('connection', () => connections++);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  });
  after(() => new Promise<void>((r) => server.close(() => r())));

  it('reads each time on a connection of its own, so an idle one the app closed is never reused', async () => {
    const port = (server.address() as AddressInfo).port;
    connections = 0;
    const first = await scrapeMetrics(port);
    // This thread busy past the server's idle timeout, as a bench building a step's bodies.
    const until = Date.now() + 60;
    while (Date.now() < until);
    const second = await scrapeMetrics(port);
    for (const e of [first, second]) expect(e.samples.find((s) => s.name === 'scraped_total')?.value).to.equal(7);
    expect(connections).to.equal(2);
  });

  it('refuses an answer other than 200', async () => {
    status = 503;
    try {
      const err = await scrapeMetrics((server.address() as AddressInfo).port).then(
        () => undefined,
        (e: Error) => e,
      );
      expect(err?.message).to.match(/answered 503/);
    } finally {
      status = 200;
    }
  });
});
