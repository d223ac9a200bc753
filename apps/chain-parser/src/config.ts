import { int, str } from '@chainpipe/runtime';
import { dbConfig } from '@chainpipe/db';
import { kafkaConfig } from '@chainpipe/kafka';

export const chainParserConfig = {
  ...kafkaConfig,
  ...dbConfig,
  CHAIN_PARSER_GROUP: str({ default: 'chain-parser', doc: 'Kafka consumer group reading chain.raw.v1' }),
  CHAIN_PARSER_FETCHED_GROUP: str({ default: '', doc: 'Kafka consumer group reading chain.fetched.v1 (transactions tx-gateway and pending-compensator fetched from chain origins); empty: CHAIN_PARSER_GROUP + "-fetched"' }),
  CHAIN_PARSER_MAX_RECORDS_PER_CALL: int({
    default: 20,
    min: 1,
    max: 500,
    doc: 'raw records per handler call: their blocks are stored, then their chain.tx messages published, then the offsets committed',
  }),
  CHAIN_PARSER_PARTITIONS_CONCURRENTLY: int({
    default: 3,
    min: 1,
    max: 64,
    doc: 'chain.raw.v1 partitions (keyed by network) a copy stores side by side, each call in DB transactions of its own; one partition is still read in order',
  }),
  CHAIN_PARSER_NETWORKS_CONCURRENTLY: int({
    default: 4,
    min: 1,
    max: 32,
    doc: 'networks of one handler call (one partition carries several) stored side by side, each in DB transactions of its own; one network is still stored in order. Each takes a pool connection (DB_POOL_MAX)',
  }),
  CHAIN_PARSER_SESSION_TIMEOUT_MS: int({ default: 30_000, min: 6_000, max: 300_000, doc: 'Kafka session timeout: how long a crashed copy holds its partitions' }),
};
