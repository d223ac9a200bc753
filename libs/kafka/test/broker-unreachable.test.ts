import { expect } from 'chai';
import { KafkaJSConnectionError, KafkaJSGroupCoordinatorNotFound, KafkaJSNonRetriableError, KafkaJSNumberOfRetriesExceeded, KafkaJSProtocolError } from 'kafkajs';
import { brokerUnreachable } from '@chainpipe/kafka';

describe('brokerUnreachable: which consumer crashes the consumer starts again from itself', () => {
  it('the crash kafkajs ends a rejoin with while the broker is down (no coordinator, wrapped as not retriable)', () => {
    // What kafkajs 2.2's retrier emits: KafkaJSNonRetriableError with KafkaJSGroupCoordinatorNotFound as its cause.
    const notFound = new (KafkaJSGroupCoordinatorNotFound as unknown as new (m: string) => Error)('Failed to find group coordinator');
    const crash = new (KafkaJSNonRetriableError as unknown as new (e: Error, m: { cause: Error }) => Error)(notFound, { cause: notFound });
    expect(brokerUnreachable(crash)).to.equal(true);
  });

  it('a refused connection, also behind the retrier', () => {
    const refused = new KafkaJSConnectionError('connect ECONNREFUSED 127.0.0.1:9092', { broker: '127.0.0.1:9092' });
    expect(brokerUnreachable(refused)).to.equal(true);
    expect(brokerUnreachable(new KafkaJSNumberOfRetriesExceeded(refused, { retryCount: 5, retryTime: 3000 }))).to.equal(true);
  });

  it('not a failure of the consumer itself (a protocol refusal, a plain error, nothing)', () => {
    const refusal = new KafkaJSProtocolError('Not authorized to access group');
    expect(brokerUnreachable(new (KafkaJSNonRetriableError as unknown as new (e: Error, m: { cause: Error }) => Error)(refusal, { cause: refusal }))).to.equal(false);
    expect(brokerUnreachable(new Error('handler failed'))).to.equal(false);
    expect(brokerUnreachable(undefined)).to.equal(false);
  });
});
