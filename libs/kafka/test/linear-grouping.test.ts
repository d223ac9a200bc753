import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import Module from 'node:module';
import { seededRandom } from '@chainpipe/testing';
import { groupMessagesPerPartition } from '../src/linear-grouping';

type Grouping = typeof groupMessagesPerPartition;

/** kafkajs' own grouping, compiled afresh from its file (the require cache may hold ours). */
function kafkajsGrouping(): Grouping {
  const path = require.resolve('kafkajs/src/producer/groupMessagesPerPartition');
  const m = new Module(path) as Module & { _compile(source: string, filename: string): void };
  m.filename = path;
  m._compile(readFileSync(path, 'utf8'), path);
  return m.exports as Grouping;
}

describe("kafkajs' grouping of a request's messages by partition, in one pass", () => {
  it('returns what kafkajs’ own returns, for any partitioner and message count (seeded)', () => {
    const theirs = kafkajsGrouping();
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
    const script = `const kafka = require('@chainpipe/kafka');
      const inUse = require('kafkajs/src/producer/groupMessagesPerPartition');
      require('kafkajs');
      process.stdout.write(JSON.stringify({ installed: kafka.linearGroupingInstalled, same: inUse === kafka.groupMessagesPerPartition }));`;
    const out = execFileSync(process.execPath, ['--require', 'tsx/cjs', '-e', script], { encoding: 'utf8' });
    expect(JSON.parse(out)).to.deep.equal({ installed: true, same: true });
  });
});
