import { expect } from 'chai';
import fc from 'fast-check';
import { useNativeCrc32c } from '../src/crc32c';
import { encodeRecord, useExactRecords, type RecordBatchFields, type RecordFields } from '../src/record-encoder';
import { kafkajsOwn } from './kafkajs-own';

const kafkajsRecordEncoder = () => kafkajsOwn<(fields: RecordFields) => { buffer: Buffer }>('kafkajs/src/protocol/recordBatch/record/v0/index.js');
type BatchEncoder = (fields: RecordBatchFields) => Promise<{ buffer: Buffer; size(): number }>;
/**
 * kafkajs' own record batch encoder, afresh from its file (the cached one is ours once a client
 * was made). Its checksum module is required through the cache: the native one put there first,
 * as every client does, not kafkajs' own left there for the checksum's tests to find.
 */
const kafkajsRecordBatch = () => {
  useNativeCrc32c();
  return kafkajsOwn<{ RecordBatch: BatchEncoder }>('kafkajs/src/protocol/recordBatch/v0/index.js').RecordBatch;
};
// eslint-disable-next-line @typescript-eslint/no-require-imports
const Long = require('kafkajs/src/utils/long.js') as { fromValue(v: number | bigint): unknown };

describe('records encoded at their exact size for kafkajs', () => {
  const kafkajsRecord = kafkajsRecordEncoder();
  const bytes: fc.Arbitrary<Buffer | string | null> = fc.oneof(
    fc.constant(null),
    fc.string({ unit: 'binary', maxLength: 300 }),
    fc.uint8Array({ maxLength: 3000 }).map((a) => Buffer.from(a)),
  );
  const headerValue: fc.Arbitrary<Buffer | string> = fc.oneof(fc.string({ unit: 'binary', maxLength: 40 }), fc.uint8Array({ maxLength: 40 }).map((a) => Buffer.from(a)));
  const fields: fc.Arbitrary<RecordFields> = fc.record(
    {
      // A record's index in its request, and past 32 bits (both take kafkajs' 32-bit arithmetic).
      offsetDelta: fc.oneof(fc.nat(5000), fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }), fc.integer({ min: -(2 ** 40), max: 2 ** 40 })),
      // Milliseconds apart: small, past 32 bits, negative (earlier than the batch's first), NaN.
      timestampDelta: fc.oneof(fc.nat(10_000), fc.integer({ min: -(2 ** 52), max: 2 ** 52 }), fc.constant(Number.NaN)),
      key: bytes,
      value: bytes,
      headers: fc.dictionary(fc.string({ unit: 'binary', minLength: 1, maxLength: 20 }), fc.oneof(headerValue, fc.array(headerValue, { maxLength: 3 })), { maxKeys: 4 }),
    },
    { requiredKeys: [] },
  );

  it('writes the bytes kafkajs writes, for any key, value, headers and deltas', () => {
    fc.assert(
      fc.property(fields, (f) => {
        expect(encodeRecord(f).equals(kafkajsRecord(f).buffer)).to.equal(true);
      }),
      { seed: 20261127, numRuns: 2000 },
    );
  });

  it('writes a record of the aggregator’s kind (a kilobyte and a half of JSON, no headers) as kafkajs does', () => {
    const value = JSON.stringify({ pool_id: 1, candles: Array.from({ length: 9 }, (_, i) => ({ interval: '1m', open_time: 1_764_240_000 + i, close: 100 + Math.sin(i) })) });
    const f = { offsetDelta: 417, timestampDelta: 0, key: 'evm:1:0xab:base', value };
    expect(encodeRecord(f)).to.deep.equal(kafkajsRecord(f).buffer);
  });

  it('is the record encoder kafkajs’ produce request loads', () => {
    expect(useExactRecords()).to.equal(true);
    // What produce/v3/request requires (`require('../../../recordBatch/record/v0')`) on the first produce.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const loaded = require('kafkajs/src/protocol/recordBatch/record/v0') as (f: RecordFields) => { buffer: Buffer };
    const f = { offsetDelta: 3, key: 'k', value: Buffer.from('v'), headers: { h: ['a', 'b'] } };
    expect(loaded(f).buffer.equals(kafkajsRecord(f).buffer)).to.equal(true);
    expect(useExactRecords(), 'a second call').to.equal(true);
  });

  describe('record batches', () => {
    const ownBatch = kafkajsRecordBatch();
    before(() => expect(useExactRecords()).to.equal(true));
    // What kafkajs' produce request loads (`require('../../../recordBatch/v0')`) and calls per partition.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const loaded = () => require('kafkajs/src/protocol/recordBatch/v0') as { RecordBatch: BatchEncoder; MAGIC_BYTE: number };
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const loadedRecord = () => require('kafkajs/src/protocol/recordBatch/record/v0') as (f: RecordFields) => unknown;
    const batchFields = fc.record(
      {
        firstOffset: fc.bigInt({ min: 0n, max: 2n ** 40n }).map((v) => Long.fromValue(v)),
        firstTimestamp: fc.integer({ min: 0, max: 2 ** 42 }),
        maxTimestamp: fc.integer({ min: 0, max: 2 ** 42 }),
        partitionLeaderEpoch: fc.integer({ min: -1, max: 1000 }),
        lastOffsetDelta: fc.nat(5000),
        transactional: fc.boolean(),
        producerId: fc.bigInt({ min: -1n, max: 2n ** 50n }).map((v) => Long.fromValue(v)),
        producerEpoch: fc.integer({ min: 0, max: 32767 }),
        firstSequence: fc.integer({ min: -1, max: 2 ** 31 - 1 }),
      },
      // Each side takes Date.now() for a timestamp not given: given, so that both write the same.
      { requiredKeys: ['firstTimestamp', 'maxTimestamp'] },
    );

    it('writes the bytes kafkajs writes, for any records and batch fields', async () => {
      await fc.assert(
        fc.asyncProperty(batchFields, fc.array(fields, { maxLength: 12 }), async (b, rs) => {
          const ours = await loaded().RecordBatch({ ...b, records: rs.map(loadedRecord()) });
          const theirs = await ownBatch({ ...b, records: rs.map(kafkajsRecord) });
          expect(ours.size()).to.equal(theirs.size());
          expect(ours.buffer.equals(theirs.buffer)).to.equal(true);
        }),
        { seed: 20261128, numRuns: 500 },
      );
    });

    it('writes a batch of the aggregator’s records (a thousand, a kilobyte and a half each) as kafkajs does', async () => {
      const records = Array.from({ length: 1000 }, (_, i) => ({ offsetDelta: i, timestampDelta: 0, key: `evm:1:0x${i}:base`, value: JSON.stringify({ pool_id: i, candles: Array.from({ length: 9 }, (_, k) => ({ interval: '1m', open_time: 1_764_240_000 + k, close: 100 + Math.sin(i + k) })) }) }));
      const b = { firstTimestamp: 1_764_240_000_123, maxTimestamp: 1_764_240_000_123, lastOffsetDelta: 999 };
      const ours = await loaded().RecordBatch({ ...b, records: records.map(loadedRecord()) });
      expect(ours.buffer.equals((await ownBatch({ ...b, records: records.map(kafkajsRecord) })).buffer)).to.equal(true);
    });

    it('leaves a compressed batch to kafkajs’ own encoder, which reads its records as encoders', async () => {
      const records = [{ offsetDelta: 0, key: 'k', value: 'a value long enough to compress, compress, compress' }, { offsetDelta: 1, value: Buffer.from('second') }];
      const b = { compression: 1, firstTimestamp: 1_764_240_000_000, maxTimestamp: 1_764_240_000_001, lastOffsetDelta: 1 };
      const ours = await loaded().RecordBatch({ ...b, records: records.map(loadedRecord()) });
      expect(ours.buffer.equals((await ownBatch({ ...b, records: records.map(kafkajsRecord) })).buffer)).to.equal(true);
      expect(loaded().MAGIC_BYTE, 'what the fetch decoder reads of the module').to.equal(2);
    });
  });
});
