import { expect } from 'chai';
import { seededRandom } from '@chainpipe/testing';
import { groupMessagesPerPartition } from '../src/linear-grouping';
import { kafkajsOwn, replacementInNewProcess } from './kafkajs-own';

type Grouping = typeof groupMessagesPerPartition;

describe("kafkajs' grouping of a request's messages by partition, in one pass", () => {
  it('returns what kafkajs’ own returns, for any partitioner and message count (seeded)', () => {
    const theirs = kafkajsOwn<Grouping>('kafkajs/src/producer/groupMessagesPerPartition');
    const rnd = seededRandom(41);
    for (const count of [0, 1, 7, 333, 1000]) {
      for (const partitions of [1, 3, 12]) {
        const partitionMetadata = Array.from({ length: partitions }, (_, partitionId) => ({ partitionId, leader: 0 }));
        const messages = Array.from({ length: count }, (_, i) => ({ key: `k${i}`, value: `v${i}`, to: Math.floor(rnd() * partitions) }));
        const args = { topic: 't', partitionMetadata, messages, partitioner: ({ message }: { message: { to: number } }) => message.to };
        const ours = groupMessagesPerPartition(args);
        expect(ours, `${count} messages, ${partitions} partitions`).to.deep.equal(theirs(args));
        expect(Object.keys(ours)).to.deep.equal(Object.keys(theirs(args)));
      }
    }
    const none = { topic: 't', partitionMetadata: [], messages: [{ to: 0 }], partitioner: () => 0 };
    expect(groupMessagesPerPartition(none), 'no partition metadata').to.deep.equal(theirs(none));
  });

  it('is what kafkajs groups with in a process that loads this package before kafkajs (as every app does)', () => {
    expect(replacementInNewProcess('kafkajs/src/producer/groupMessagesPerPartition', 'groupMessagesPerPartition', 'linearGroupingInstalled')).to.deep.equal({ installed: true, same: true });
  });
});
