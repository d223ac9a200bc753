import { expect } from 'chai';
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import Module from 'node:module';
import { dirname } from 'node:path';
import { encodeRecord, useExactRecords, type RecordFields } from '../src/record-encoder';

/**
 * kafkajs' own record encoder, compiled afresh from its file: the require cache may already hold
 * ours under its path (any client created in this process installs it).
 */
function kafkajsRecordEncoder(): (fields: RecordFields) => { buffer: Buffer } {
  const path = require.resolve('kafkajs/src/protocol/recordBatch/record/v0/index.js');
  const m = new Module(path, module) as Module & { _compile(code: string, file: string): void; paths: string[] };
  m.filename = path;
  m.paths = (Module as unknown as { _nodeModulePaths(dir: string): string[] })._nodeModulePaths(dirname(path));
  m._compile(readFileSync(path, 'utf8'), path);
  return m.exports as (fields: RecordFields) => { buffer: Buffer };
}

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
});
