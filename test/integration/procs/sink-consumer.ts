/**
 * A real consumer app used by the crash tests: consumes addresses.changes.v1 through our
 * BatchConsumer and writes each record to an idempotent sink table (and an append-only
 * processing log, which shows replays). Slow on purpose (PER_RECORD_DELAY_MS) so a test can
 * kill it in the middle of a batch.
 */
import { TOPICS, type AddressChangeMessage } from '@chainpipe/contracts';
import { addPostgres, dbConfig } from '@chainpipe/db';
import { addKafka, kafkaConfig } from '@chainpipe/kafka';
import { int, runService, sleep, str } from '@chainpipe/runtime';

const sinkConfig = {
  ...kafkaConfig,
  ...dbConfig,
  GROUP_ID: str(),
  PER_RECORD_DELAY_MS: int({ default: 0, min: 0 }),
  MAX_RECORDS_PER_CALL: int({ default: 20, min: 1 }),
};

runService('sink-consumer', sinkConfig, async (svc) => {
  const { config } = svc;
  const db = addPostgres(svc, { poolMax: 2 });
  await addKafka(svc).consume<AddressChangeMessage>(TOPICS.addressesChanges, {
    groupId: config.GROUP_ID,
    maxRecordsPerCall: config.MAX_RECORDS_PER_CALL,
    handler: async (records) => {
      for (const r of records) {
        const id = r.value.changed_at;
        await db('selftest.processing_log').insert({ id, pid: process.pid });
        await sleep(config.PER_RECORD_DELAY_MS);
        await db('selftest.sink').insert({ id }).onConflict('id').ignore();
      }
    },
  });
});
