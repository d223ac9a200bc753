import { expect } from 'chai';
import { BrokerLink, isReachabilityError } from '@chainpipe/kafka';
import { ManualClock } from '@chainpipe/testing';

describe('BrokerLink', () => {
  it('goes down on a failed send, probes every downProbeMs, and is up again on the first answered probe', async () => {
    const clock = new ManualClock();
    let brokerUp = false;
    let probes = 0;
    const changes: boolean[] = [];
    const link = new BrokerLink({ clock, downProbeMs: 500, idleProbeMs: 2_000, probe: async () => { probes++; if (!brokerUp) throw new Error('ECONNREFUSED'); }, onChange: (up) => changes.push(up) });
    link.start();
    link.failed(new Error('Connection error: connect ECONNREFUSED'));
    expect(link.up).to.equal(false);
    expect(link.health()).to.deep.equal({ state: 'degraded', detail: 'broker unreachable: Connection error: connect ECONNREFUSED' });
    await clock.advance(1_600);
    expect(probes, 'one probe per 500 ms while down').to.equal(3);
    expect(link.up).to.equal(false);
    brokerUp = true;
    await clock.advance(500);
    expect(link.up).to.equal(true);
    expect(link.health()).to.deep.equal({ state: 'ok' });
    expect(changes).to.deep.equal([false, true]);
    link.stop();
  });

  it('probes an idle link every idleProbeMs and notices an outage without traffic; traffic makes probes unnecessary', async () => {
    const clock = new ManualClock();
    let brokerUp = true;
    let probes = 0;
    const link = new BrokerLink({ clock, downProbeMs: 500, idleProbeMs: 2_000, probe: async () => { probes++; if (!brokerUp) throw new Error('ECONNREFUSED'); } });
    link.start();
    for (let i = 0; i < 8; i++) {
      await clock.advance(500);
      link.succeeded(); // a send acknowledged every 500 ms
    }
    expect(probes, 'no probe while sends are acknowledged').to.equal(0);
    await clock.advance(2_000);
    expect(probes).to.equal(1);
    brokerUp = false;
    await clock.advance(2_000);
    expect(link.up).to.equal(false);
    link.stop();
    const before = probes;
    await clock.advance(10_000);
    expect(probes, 'stopped: no more probes').to.equal(before);
  });

  it('counts a probe that does not answer in probeTimeoutMs as failed', async () => {
    const clock = new ManualClock();
    const link = new BrokerLink({ clock, idleProbeMs: 1_000, probeTimeoutMs: 300, probe: () => new Promise<void>(() => undefined) });
    link.start();
    await clock.advance(1_299);
    expect(link.up).to.equal(true);
    await clock.advance(2);
    expect(link.up).to.equal(false);
    expect(link.health().detail).to.match(/no answer in 300 ms/);
    link.stop();
  });
});

describe('isReachabilityError', () => {
  it('is true for retriable kafkajs errors, also wrapped in "retries exceeded", false for a bad request', () => {
    const refused = Object.assign(new Error('Connection error: connect ECONNREFUSED 127.0.0.1:9092'), { name: 'KafkaJSConnectionError', retriable: true });
    const exceeded = Object.assign(new Error('retries exceeded'), { name: 'KafkaJSNumberOfRetriesExceeded', retriable: false, originalError: refused });
    const tooLarge = Object.assign(new Error('The request included a message larger than the max message size the server will accept'), { name: 'KafkaJSProtocolError', retriable: false, type: 'MESSAGE_TOO_LARGE' });
    expect(isReachabilityError(refused)).to.equal(true);
    expect(isReachabilityError(exceeded)).to.equal(true);
    expect(isReachabilityError(tooLarge)).to.equal(false);
    expect(isReachabilityError('text')).to.equal(false);
  });
});
