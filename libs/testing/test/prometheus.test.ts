import { expect } from 'chai';
import { Counter, Histogram, Registry } from 'prom-client';
import { parsePrometheusText } from '@chainpipe/testing';

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
