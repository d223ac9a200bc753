import { TOPICS } from '@chainpipe/contracts';
import { addPostgres } from '@chainpipe/db';
import { addKafka } from '@chainpipe/kafka';
import { runService } from '@chainpipe/runtime';
import { resolveStoredInputs, storeBlocks } from '@chainpipe/tx-store';
import { createParserHandlers } from './chain-raw.handler';
import { chainParserConfig } from './config';
import { normalizedTxCheck } from './tx-contract';

runService('chain-parser', chainParserConfig, async (svc) => {
  const { config, logger, registry } = svc;
  const db = addPostgres(svc);
  // One publish per consumer call, awaited before the commit: a linger would only add latency.
  const kafka = addKafka(svc, { producer: { lingerMs: 0 } });
  const producer = await kafka.producer();
  const handlers = createParserHandlers({
    storeBlocks: (inputs) => storeBlocks(db, inputs, { prepare: resolveStoredInputs }),
    // Every tx was checked against common/normalized-tx before its block was stored (checkTx),
    // and what is published is the stored record (checked records merged by storeBlock, Bitcoin
    // inputs filled from stored outputs): the producer checks the envelope only. Every consumer
    // of chain.tx.v1 still checks the whole message and dead-letters one that breaks it.
    publish: (messages) => producer.publishSkippingTooLarge(TOPICS.chainTx, messages, { recordChecked: true }),
    checkTx: normalizedTxCheck(kafka.contracts),
    networksConcurrently: config.CHAIN_PARSER_NETWORKS_CONCURRENTLY,
    logger,
    registry,
  });
  await kafka.consume(TOPICS.chainRaw, {
    groupId: config.CHAIN_PARSER_GROUP,
    maxRecordsPerCall: config.CHAIN_PARSER_MAX_RECORDS_PER_CALL,
    // Networks on different partitions store side by side (disjoint rows and block locks); the
    // handler keeps no state between calls.
    partitionsConcurrently: config.CHAIN_PARSER_PARTITIONS_CONCURRENTLY,
    sessionTimeoutMs: config.CHAIN_PARSER_SESSION_TIMEOUT_MS,
    handler: handlers.chainRaw,
  });
  // Transactions tx-gateway fetched from chain origins: stored and published like the stream's.
  await kafka.consume(TOPICS.chainFetched, {
    groupId: config.CHAIN_PARSER_FETCHED_GROUP || `${config.CHAIN_PARSER_GROUP}-fetched`,
    maxRecordsPerCall: config.CHAIN_PARSER_MAX_RECORDS_PER_CALL,
    sessionTimeoutMs: config.CHAIN_PARSER_SESSION_TIMEOUT_MS,
    handler: handlers.chainFetched,
  });
});
