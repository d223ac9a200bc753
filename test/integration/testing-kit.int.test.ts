import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { collectTopic, freePort, produceJson, spawnTs, testKafka, uniquePrefix, waitReady } from '@chainpipe/testing';

describe('test kit (libs/testing) against real processes and the broker', () => {
  it('waitReady fails as soon as the process exits, with its output, not at its timeout', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'kit-'));
    const entry = path.join(dir, 'crash.ts');
    writeFileSync(entry, "console.error('config: DATABASE_URL is required');\nprocess.exit(3);\n");
    const proc = spawnTs(entry, {});
    // 10 minutes of readiness timeout inside mocha's 60 s: only an immediate failure passes.
    const err = await waitReady(proc, await freePort(), 600_000).catch((e: unknown) => e as Error);
    expect(err).to.be.instanceOf(Error);
    expect((err as Error).message).to.include('process exited (3) before ready');
    expect((err as Error).message).to.include('config: DATABASE_URL is required');
  });

  it('a topic collector settles once it has read everything written before, so "exactly N" needs no sleep', async () => {
    const topic = `${uniquePrefix('kit')}settle`;
    const admin = testKafka().admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic, numPartitions: 3 }], waitForLeaders: true });
    await admin.disconnect();
    const collector = await collectTopic(topic);
    try {
      await produceJson(topic, Array.from({ length: 30 }, (_, i) => ({ key: `k${i}`, value: { i } })));
      const all = await collector.settled(30_000);
      expect(all.map((m) => JSON.parse(m.value!.toString()).i).sort((a: number, b: number) => a - b)).to.deep.equal(Array.from({ length: 30 }, (_, i) => i));
      await produceJson(topic, [{ key: 'late', value: { i: 30 } }]);
      expect((await collector.settled(30_000)).length).to.equal(31);
    } finally {
      await collector.stop();
    }
  });
});
