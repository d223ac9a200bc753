import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { Kafka, logLevel } from 'kafkajs';
import { TOPICS } from '@chainpipe/contracts';
import { createDb, type Knex } from '@chainpipe/db';
import { AppProcess, PrivateKafkaCluster, StreamerLoad, checkAcknowledgedStoredPublished, elapsedMs, freePort, waitFor } from '@chainpipe/testing';
import { createTopicsOn, faultEnv, recoveries } from '../fault/fault-env';

const SECRET = 'fault-suite-stream-secret';

/** The partition of `topic` that holds records (the streamer's one network key lands on one). */
async function busyPartition(brokers: string[], topic: string): Promise<number> {
  const admin = new Kafka({ clientId: 'fault-admin', brokers, logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    const offsets = await admin.fetchTopicOffsets(topic);
    const busy = offsets.filter((p) => BigInt(p.high) > 0n);
    if (busy.length !== 1) throw new Error(`expected one partition with records, got ${JSON.stringify(offsets)}`);
    return busy[0].partition;
  } finally {
    await admin.disconnect();
  }
}

/**
 * Broker failover on a three-node cluster with production's replication settings (replication
 * factor 3, min.insync.replicas 2, acks=all): the leader of chain.raw.v1's partition is killed
 * under load; producers and consumers move to the new leader and nothing acknowledged is lost.
 */
describe('broker failover: three-node cluster, partition leader killed under load', function () {
  this.timeout(300_000);
  let cluster: PrivateKafkaCluster | undefined;
  let db: Knex;
  let ingest: AppProcess | undefined;
  let parser: AppProcess | undefined;
  let load: StreamerLoad | undefined;
  let ingestUrl: string;

  before(async function () {
    this.timeout(240_000);
    db = createDb({ url: faultEnv().databaseUrl, poolMax: 2 });
    cluster = await PrivateKafkaCluster.start();
    await createTopicsOn(cluster.brokers, 3);
    const common = { KAFKA_BROKERS: cluster.brokers.join(','), DATABASE_URL: faultEnv().databaseUrl, LOG_LEVEL: 'warn' };
    const ingestPort = await freePort();
    ingestUrl = `http://127.0.0.1:${ingestPort}`;
    [ingest, parser] = await Promise.all([
      AppProcess.start('apps/chain-ingest/src/main.ts', { ...common, STREAM_SECRET: SECRET, PORT: String(ingestPort), KAFKA_PUBLISH_TIMEOUT_MS: '10000' }),
      AppProcess.start('apps/chain-parser/src/main.ts', { ...common, CHAIN_PARSER_GROUP: 'failover-parser' }),
    ]);
  });

  afterEach(async function () {
    await load?.stop();
    if (this.currentTest?.state !== 'failed') return;
    for (const [name, app] of [['chain-ingest', ingest], ['chain-parser', parser]] as const) {
      const file = path.join(os.tmpdir(), `failover-${name}.log`);
      writeFileSync(file, app?.process.output() ?? '');
      console.log(`    ${name} output: ${file}`);
    }
  });

  after(async function () {
    this.timeout(120_000);
    const codes = [];
    for (const app of [ingest, parser]) if (app) codes.push(await app.stop());
    await db?.destroy();
    await cluster?.destroy();
    expect(codes, 'both apps shut down cleanly').to.deep.equal([0, 0]);
  });

  it('moves producers and consumers to the new leader; every acknowledged delivery is stored and published once', async () => {
    const c = cluster!;
    load = new StreamerLoad({ url: ingestUrl, secret: SECRET, concurrency: 2, pauseMs: 50, firstHeight: 5_000_000 }).start();
    await load.waitAcked(10, 60_000);
    const partition = await busyPartition(c.brokers, TOPICS.chainRaw.name);
    const leader = await c.leaderOf(TOPICS.chainRaw.name, partition);
    const alive = c.brokers.filter((_, i) => i + 1 !== leader);
    await c.killNode(leader);
    const killed = Date.now();
    const newLeader = await c.waitForLeader(TOPICS.chainRaw.name, { partition, notNode: leader });
    recoveries.push({ fault: 'partition leader killed (3 nodes)', what: 'kill to a new leader elected', ms: elapsedMs(killed) });
    expect(newLeader).to.not.equal(leader);
    const firstOk = await waitFor(() => load!.since(killed).find((d) => d.status === 200), { timeoutMs: 60_000, what: 'a 200 after the kill' });
    recoveries.push({ fault: 'partition leader killed (3 nodes)', what: 'kill to the first 200 on /stream', ms: Math.max(0, firstOk.at + firstOk.ms - killed) });
    await load.waitAcked(20, 60_000);
    const deliveries = await load.stop();
    expect(deliveries.filter((d) => ![200, 503].includes(d.status)).map((d) => d.status), 'only 200 or 503').to.deep.equal([]);
    const t0 = Date.now();
    const check = await checkAcknowledgedStoredPublished({ db, brokers: alive, chainTxTopic: TOPICS.chainTx.name, acknowledged: load.acknowledged, timeoutMs: 90_000 });
    recoveries.push({ fault: 'partition leader killed (3 nodes)', what: 'end of load to every acknowledged tx published', ms: elapsedMs(t0) });
    expect(check.transactions).to.equal(check.deliveries * 8);
  });
});
