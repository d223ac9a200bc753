import { expect } from 'chai';
import { Partitioners } from 'kafkajs';
import { Murmur2Partitioner, murmur2 } from '@chainpipe/kafka';
import { randomIndex, seededRandom } from '@chainpipe/testing';

describe('Murmur2Partitioner', () => {
  const rnd = seededRandom(7);
  const alphabet = ['a', 'Z', '0', ':', '-', 'é', '€', '😀', '\u0000', 'x'];
  const keys = [
    '',
    'a',
    'ab',
    'abc',
    'abcd',
    'evm:1:0x00000000000000000000000000000000000000a1:base',
    ...Array.from({ length: 2000 }, () => Array.from({ length: randomIndex(rnd, 90) }, () => alphabet[randomIndex(rnd, alphabet.length)]).join('')),
  ];
  const metadata = (n: number) => Array.from({ length: n }, (_, partitionId) => ({ partitionErrorCode: 0, partitionId, leader: 1, replicas: [1], isr: [1] }));

  it("picks the partition kafkajs' DefaultPartitioner picks for every key (the Java client's murmur2)", () => {
    for (const partitions of [1, 3, 7, 48]) {
      const ours = Murmur2Partitioner();
      const theirs = Partitioners.DefaultPartitioner();
      const partitionMetadata = metadata(partitions);
      for (const key of keys) {
        for (const k of [key, Buffer.from(key)]) {
          const args = { topic: 't', partitionMetadata, message: { key: k, value: null } };
          expect(ours(args), `key ${JSON.stringify(key)} over ${partitions}`).to.equal(theirs(args));
        }
      }
    }
  });

  it('hashes a string key over its UTF-8 bytes, however long', () => {
    const long = 'é'.repeat(500);
    expect(murmur2(long)).to.equal(murmur2(Buffer.from(long)));
  });

  it("keeps a message's own partition and spreads keyless messages over the partitions with a leader", () => {
    const pick = Murmur2Partitioner();
    const partitionMetadata = [...metadata(3), { partitionErrorCode: 0, partitionId: 3, leader: -1, replicas: [1], isr: [] }];
    expect(pick({ topic: 't', partitionMetadata, message: { key: 'k', value: null, partition: 3 } })).to.equal(3);
    const seen = new Set(Array.from({ length: 12 }, () => pick({ topic: 't', partitionMetadata, message: { value: null } })));
    expect([...seen].sort()).to.deep.equal([0, 1, 2]);
  });
});
