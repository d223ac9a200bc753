import { expect } from 'chai';
import { TOPICS, loadContracts, type AddressChangeMessage } from '@chainpipe/contracts';
import { createDb, type Knex } from '@chainpipe/db';
import { TopicProducer, createKafka } from '@chainpipe/kafka';
import { createLogger } from '@chainpipe/runtime';
import { Registry } from 'prom-client';
import {
  committedOffset,
  createRegistryTopics,
  freePort,
  spawnTs,
  stopProcess,
  testEnv,
  uniquePrefix,
  waitFor,
  waitReady,
  type RunningProcess,
} from '@chainpipe/testing';

const logger = createLogger({ name: 'test', level: 'silent' });

describe('consumer crash safety (separate process, the test broker and Postgres)', () => {
  let db: Knex;
  let prefix: string;
  let topic: string;
  let groupId: string;
  const procs: RunningProcess[] = [];

  before(async () => {
    db = createDb({ url: testEnv().databaseUrl, poolMax: 2 });
    await db.raw('create schema if not exists selftest');
    await db.raw('create table if not exists selftest.sink (id bigint primary key)');
    await db.raw('create table if not exists selftest.processing_log (id bigint not null, pid int not null)');
  });

  after(async () => {
    for (const p of procs) await stopProcess(p);
    await db.destroy();
  });

  beforeEach(async () => {
    await db.raw('truncate selftest.sink, selftest.processing_log');
    prefix = uniquePrefix('crash');
    topic = prefix + TOPICS.addressesChanges.name;
    groupId = `${prefix}sink`;
    await createRegistryTopics(prefix, [TOPICS.addressesChanges]);
  });

  async function publish(n: number): Promise<number[]> {
    const registry = new Registry();
    const kafka = createKafka({ brokers: testEnv().kafkaBrokers, clientId: 'crash-producer', logger });
    const producer = new TopicProducer({ kafka, contracts: loadContracts(), logger, registry, topicPrefix: prefix });
    await producer.connect();
    const ids = Array.from({ length: n }, (_, i) => 1_000 + i);
    const messages = ids.map((id): { value: AddressChangeMessage } => ({ value: { app_id: 'app', chain_type: 'ethereum', adds: [`a${id}`], removes: [], changed_at: id } }));
    await producer.publish(TOPICS.addressesChanges, messages);
    await producer.disconnect();
    return ids;
  }

  async function startSink(env: Record<string, string>): Promise<{ proc: RunningProcess; opsPort: number }> {
    const opsPort = await freePort();
    const proc = spawnTs('test/integration/procs/sink-consumer.ts', {
      KAFKA_BROKERS: testEnv().kafkaBrokers.join(','),
      KAFKA_TOPIC_PREFIX: prefix,
      DATABASE_URL: testEnv().databaseUrl,
      GROUP_ID: groupId,
      OPS_PORT: String(opsPort),
      MAX_RECORDS_PER_CALL: '20',
      ...env,
    });
    procs.push(proc);
    await waitReady(proc, opsPort);
    return { proc, opsPort };
  }

  const count = async (table: string): Promise<number> => Number((await db(table).count<{ n: string }[]>({ n: '*' }))[0].n);

  it('SIGKILL in the middle of a batch: the restart processes every message at least once, the idempotent sink holds each exactly once', async () => {
    const ids = await publish(60);
    const first = await startSink({ PER_RECORD_DELAY_MS: '40' });
    // Records 21..39 are in the second handler call, whose offsets are not committed yet.
    await waitFor(async () => (await count('selftest.sink')) >= 25, { what: 'sink to pass 25', timeoutMs: 30_000, intervalMs: 20 });
    first.proc.kill('SIGKILL');
    expect(await first.proc.exited).to.equal('SIGKILL');
    const sinkAtKill = await count('selftest.sink');
    const committedAtKill = await committedOffset(groupId, topic);
    expect(committedAtKill, 'the kill landed after some work that was not committed').to.be.lessThan(sinkAtKill);

    const second = await startSink({ PER_RECORD_DELAY_MS: '0' });
    await waitFor(async () => (await committedOffset(groupId, topic)) === 60, { what: 'all 60 committed', timeoutMs: 30_000 });
    const sink = (await db('selftest.sink').select('id').orderBy('id')).map((r) => Number(r.id));
    expect(sink).to.deep.equal(ids);
    const log = await db('selftest.processing_log').select('id');
    const seen = new Set(log.map((r) => Number(r.id)));
    expect(seen.size, 'every message processed at least once').to.equal(60);
    expect(log.length, 'uncommitted work was replayed after the kill').to.be.greaterThan(60);
    expect(await stopProcess(second.proc)).to.equal(0);
  });

  it('SIGTERM drains the in-flight batch, commits it, leaves the group and exits 0 within the deadline', async () => {
    await publish(40);
    const { proc } = await startSink({ PER_RECORD_DELAY_MS: '60', SHUTDOWN_TIMEOUT_MS: '15000' });
    await waitFor(async () => (await count('selftest.sink')) >= 5, { what: 'first batch under way', timeoutMs: 30_000, intervalMs: 20 });
    const t0 = Date.now();
    proc.kill('SIGTERM');
    const code = await proc.exited;
    const elapsed = Date.now() - t0;
    expect(code).to.equal(0);
    expect(elapsed).to.be.lessThan(15_000);
    // The first handler call (20 records) was finished and committed; nothing after it began.
    expect(await committedOffset(groupId, topic)).to.equal(20);
    expect(await count('selftest.sink')).to.equal(20);
    expect(await count('selftest.processing_log'), 'nothing was processed twice').to.equal(20);
    expect(proc.output()).to.match(/"msg":"shutdown_complete","exitCode":0/);
  });
});
