import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { nativeCrc32c, useNativeCrc32c } from '../src/crc32c';

// kafkajs' own checksum (a table look-up per byte): what the native one replaces.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const kafkajsCrc32c = require('kafkajs/src/protocol/recordBatch/crc32C/crc32C.js') as (b: Buffer) => number;

describe('native CRC-32C for kafkajs record batches', () => {
  it('gives the CRC-32C (Castagnoli) check value of RFC 3720 and of the standard test string', () => {
    // RFC 3720 B.4: 32 bytes of zeros → 0x8a9136aa, of 0xff → 0x62a8ab43; "123456789" → 0xe3069283.
    expect(nativeCrc32c(Buffer.alloc(32, 0))).to.equal(0x8a9136aa);
    expect(nativeCrc32c(Buffer.alloc(32, 0xff))).to.equal(0x62a8ab43);
    expect(nativeCrc32c(Buffer.from('123456789'))).to.equal(0xe3069283);
  });

  it('agrees with kafkajs’ JavaScript checksum on record-batch-sized bodies', () => {
    for (const size of [0, 1, 61, 4096, 1_230_000]) {
      const body = randomBytes(size);
      expect(nativeCrc32c(body), `${size} bytes`).to.equal(kafkajsCrc32c(body));
    }
  });

  it('is the checksum kafkajs’ record batch encoder loads', () => {
    expect(useNativeCrc32c()).to.equal(true);
    // What recordBatch/v0 requires (`require('../crc32C')`) on the first produce.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    expect(require('kafkajs/src/protocol/recordBatch/crc32C')).to.equal(nativeCrc32c);
    expect(useNativeCrc32c(), 'a second call').to.equal(true);
  });
});
