import { int, str } from '@chainpipe/runtime';
import { dbConfig } from '@chainpipe/db';
import { kafkaConfig } from '@chainpipe/kafka';
import { redisConfig } from '@chainpipe/redis';

export const txMatcherConfig = {
  ...kafkaConfig,
  ...dbConfig,
  ...redisConfig,
  TX_MATCHER_POOL_RELOAD_INTERVAL_MS: int({ default: 5_000, min: 100, doc: 'how often the registered DEX pools are re-read' }),
  TX_MATCHER_GROUP: str({ default: 'tx-matcher', doc: 'consumer group reading chain.tx.v1 (copies share it: partitions split)' }),
  TX_MATCHER_CHANGES_GROUP_PREFIX: str({
    default: 'tx-matcher-changes',
    doc: 'prefix of the per-process group reading addresses.changes.v1 (every copy needs every change); <prefix>-<host>-<random>, deleted on a clean stop',
  }),
  TX_MATCHER_RESYNC_INTERVAL_MS: int({ default: 300_000, min: 1_000, doc: 'period of the full reload of tx.monitored_addresses (repairs missed change notices)' }),
  TX_MATCHER_SCAN_PAGE_SIZE: int({ default: 50_000, min: 100, max: 1_000_000, doc: 'rows per page of a full reload' }),
  TX_MATCHER_SESSION_TIMEOUT_MS: int({ default: 30_000, min: 6_000, max: 300_000, doc: 'Kafka session timeout: how long a crashed copy holds its partitions' }),
  TX_MATCHER_MAX_RECORDS_PER_CALL: int({ default: 500, min: 1, max: 5000, doc: 'chain.tx records per handler call (matched, pushed, then committed)' }),
  TX_MATCHER_PARTITIONS_CONCURRENTLY: int({
    default: 3,
    min: 1,
    max: 64,
    doc: "chain.tx.v1 partitions matched at the same time (a block's transactions spread over every partition by hash; pushes of different partitions have no order between them): a record waits for no other partition's call and offset commit",
  }),
};
