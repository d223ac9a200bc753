import { expect } from 'chai';
import { Kafka, logLevel } from 'kafkajs';
import { Registry } from 'prom-client';
import { loadContracts } from '@chainpipe/contracts';
import { TopicProducer } from '@chainpipe/kafka';
import { createLogger, type RetryableError } from '@chainpipe/runtime';
import { ManualClock } from '@chainpipe/testing';

/**
 * A producer that was never connected: kafkajs refuses every send at once with a retriable
 * error, which is what a broker out of reach looks like to the send retry.
 */
const contracts = loadContracts();
function unconnectedProducer(clock: ManualClock, publishTimeoutMs: number) {
  const kafka = new Kafka({ clientId: 'timing-test', brokers: ['127.0.0.1:1'], logLevel: logLevel.NOTHING });
  return new TopicProducer({ kafka, contracts, logger: createLogger({ name: 'test', level: 'silent' }), registry: new Registry(), maxBatchMessages: 1, publishTimeoutMs, clock });
}

const outcome = (p: Promise<void>) => {
  const o: { settled: boolean; err?: RetryableError } = { settled: false };
  p.then(
    () => (o.settled = true),
    (err: RetryableError) => Object.assign(o, { settled: true, err }),
  );
  return o;
};

describe('TopicProducer timing on a manual clock', () => {
  it('retries an unreachable broker after 200, 400 and 800 ms, then fails the publish: at 1.4 s exactly', async () => {
    const clock = new ManualClock();
    const producer = unconnectedProducer(clock, 60_000);
    const publish = outcome(producer.publishEncoded('timing-test', [{ key: null, value: 'x' }]));
    await clock.advance(1_399);
    expect(publish.settled).to.equal(false);
    await clock.advance(1);
    expect(publish.err?.code).to.equal('PRODUCE_FAILED');
    expect(clock.pendingTimers, 'the publish timeout is cancelled').to.equal(0);
  });

  it('rejects a publish not acknowledged within publishTimeoutMs with PRODUCE_TIMEOUT, at that instant', async () => {
    const clock = new ManualClock();
    const producer = unconnectedProducer(clock, 1_000);
    const publish = outcome(producer.publishEncoded('timing-test', [{ key: null, value: 'x' }]));
    await clock.advance(999);
    expect(publish.settled).to.equal(false);
    await clock.advance(1);
    expect(publish.err?.code).to.equal('PRODUCE_TIMEOUT');
  });
});
