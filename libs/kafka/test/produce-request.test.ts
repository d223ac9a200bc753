import { expect } from 'chai';
import fc from 'fast-check';
import { useNativeCrc32c } from '../src/crc32c';
import { exactProduceRequest, frameRequest, requestFramingInstalled, useExactProduceRequests } from '../src/produce-request';
import { useExactRecords } from '../src/record-encoder';
import { kafkajsOwn, replacementInNewProcess } from './kafkajs-own';

type Framing = typeof frameRequest;
type ProduceRequest = typeof exactProduceRequest;
// eslint-disable-next-line @typescript-eslint/no-require-imports
const Encoder = require('kafkajs/src/protocol/encoder.js') as new () => { writeBuffer(b: Buffer): unknown; buffer: Buffer };
// eslint-disable-next-line @typescript-eslint/no-require-imports
const Long = require('kafkajs/src/utils/long.js') as { fromValue(v: number | bigint): unknown };

/** Date.now() fixed while `f` runs: both encoders take it for a batch whose messages have no timestamp. */
async function at<T>(now: number, f: () => Promise<T>): Promise<T> {
  const real = Date.now;
  Date.now = () => now;
  try {
    return await f();
  } finally {
    Date.now = real;
  }
}

describe('requests written at their exact size for kafkajs', () => {
  describe('framing', () => {
    const theirs = kafkajsOwn<Framing>('kafkajs/src/protocol/request.js');
    const payloadOf = (bytes: Buffer) => {
      const e = new Encoder();
      e.writeBuffer(bytes);
      return e;
    };

    it('writes the bytes kafkajs writes, for any request header and payload', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 0, max: 32767 }),
          fc.integer({ min: 0, max: 32767 }),
          fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
          fc.oneof(fc.constant(null), fc.string({ maxLength: 40 }), fc.string({ unit: 'grapheme', maxLength: 20 })),
          fc.uint8Array({ maxLength: 5000 }).map((a) => Buffer.from(a)),
          async (apiKey, apiVersion, correlationId, clientId, bytes) => {
            const request = { apiKey, apiVersion, encode: async () => payloadOf(bytes) };
            const ours = await frameRequest({ correlationId, clientId, request });
            const own = await theirs({ correlationId, clientId, request });
            expect(ours.size()).to.equal(own.size());
            expect(ours.buffer.equals(own.buffer)).to.equal(true);
          },
        ),
        { seed: 20261127, numRuns: 1000 },
      );
    });

    it('is what kafkajs frames its requests with in a process that loads this package before kafkajs (as every app does)', () => {
      expect(replacementInNewProcess('kafkajs/src/protocol/request.js', 'frameRequest', 'requestFramingInstalled')).to.deep.equal({ installed: true, same: true });
      expect(typeof requestFramingInstalled).to.equal('boolean');
    });
  });

  describe('produce', () => {
    // kafkajs' own, compiled once ours are installed: it requires the record encoders as it loads.
    let theirs: ProduceRequest;
    before(() => {
      useNativeCrc32c();
      expect(useExactRecords()).to.equal(true);
      theirs = kafkajsOwn<ProduceRequest>('kafkajs/src/protocol/requests/produce/v3/request.js');
    });
    const bytes: fc.Arbitrary<Buffer | string | null> = fc.oneof(fc.constant(null), fc.string({ maxLength: 200 }), fc.uint8Array({ maxLength: 2000 }).map((a) => Buffer.from(a)));
    const message = fc.record(
      {
        key: bytes,
        value: bytes,
        headers: fc.dictionary(fc.string({ minLength: 1, maxLength: 10 }), fc.string({ maxLength: 20 }), { maxKeys: 3 }),
        // Numbers and text, as kafkajs takes both (its batch's first and last are by a text sort).
        timestamp: fc.oneof(fc.integer({ min: 1_700_000_000_000, max: 1_800_000_000_000 }), fc.integer({ min: 1_700_000_000_000, max: 1_800_000_000_000 }).map(String)),
      },
      { requiredKeys: ['value'] },
    );
    const topicData = fc.array(
      fc.record({
        topic: fc.string({ minLength: 1, maxLength: 30 }),
        partitions: fc.array(fc.record({ partition: fc.nat(63), firstSequence: fc.integer({ min: 0, max: 2 ** 31 - 1 }), messages: fc.array(message, { minLength: 1, maxLength: 8 }) }), { minLength: 1, maxLength: 4 }),
      }),
      { minLength: 1, maxLength: 3 },
    );
    const args = fc.record(
      {
        acks: fc.constantFrom(-1, 0, 1),
        timeout: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        transactionalId: fc.oneof(fc.constant(null), fc.string({ minLength: 1, maxLength: 20 })),
        producerId: fc.bigInt({ min: -1n, max: 2n ** 50n }).map((v) => Long.fromValue(v)),
        producerEpoch: fc.integer({ min: 0, max: 32767 }),
        compression: fc.constantFrom(0, 1),
        topicData,
      },
      { requiredKeys: ['acks', 'timeout', 'topicData'] },
    );

    it('writes the bytes kafkajs writes, for any topics, partitions, messages and request fields', async () => {
      await fc.assert(
        fc.asyncProperty(args, async (a) => {
          const ours = exactProduceRequest(a);
          const own = theirs(a);
          expect([ours.apiKey, ours.apiVersion, ours.apiName, ours.expectResponse()]).to.deep.equal([own.apiKey, own.apiVersion, own.apiName, own.expectResponse()]);
          const [mine, kafkajs] = await at(1_764_240_000_000, async () => [await ours.encode(), await own.encode()]);
          expect(mine.size()).to.equal(kafkajs.size());
          expect(mine.buffer.equals(kafkajs.buffer)).to.equal(true);
        }),
        { seed: 20261129, numRuns: 300 },
      );
    });

    it('writes messages without timestamps as kafkajs does (the batch stamped now)', async () => {
      const a = { acks: -1, timeout: 30_000, topicData: [{ topic: 'kline.candles.v2', partitions: [{ partition: 2, messages: [{ key: 'k', value: 'v' }, { key: null, value: Buffer.from('w') }] }] }] };
      const [mine, kafkajs] = await at(1_764_240_000_123, async () => [await exactProduceRequest(a).encode(), await theirs(a).encode()]);
      expect(mine.buffer.equals(kafkajs.buffer)).to.equal(true);
    });

    it('writes a request of the aggregator’s kind (3,333 records of a kilobyte and a half over three partitions) as kafkajs does', async () => {
      const record = (i: number) => ({ key: `evm:1:0x${i}:base`, value: JSON.stringify({ pool_id: i, candles: Array.from({ length: 9 }, (_, k) => ({ interval: '1m', open_time: 1_764_240_000 + k, close: 100 + Math.sin(i + k) })) }) });
      const partitions = [0, 1, 2].map((partition) => ({ partition, firstSequence: 0, messages: Array.from({ length: 1111 }, (_, i) => record(i * 3 + partition)) }));
      const a = { acks: -1, timeout: 30_000, topicData: [{ topic: 'kline.candles.v2', partitions }] };
      const [mine, kafkajs] = await at(1_764_240_000_000, async () => [await exactProduceRequest(a).encode(), await theirs(a).encode()]);
      expect(mine.buffer.equals(kafkajs.buffer)).to.equal(true);
    });

    it('is the request kafkajs’ produce loads', () => {
      expect(useExactProduceRequests()).to.equal(true);
      // What produce/index.js requires for versions 3 to 7 (v4 and v5 wrap v3, v6 v5, v7 v6).
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      expect(require('kafkajs/src/protocol/requests/produce/v3/request.js')).to.equal(exactProduceRequest);
      expect(useExactProduceRequests(), 'a second call').to.equal(true);
    });
  });
});
