import { Counter, Histogram, type Registry } from 'prom-client';
import type { ChainFetchedMessage, ChainTxMessage } from '@chainpipe/contracts';
import type { BatchHandler, ConsumedRecord, DeadLetter, OutgoingMessage, TooLargeMessage } from '@chainpipe/kafka';
import { RetryableError, eachBounded, errorMessage, type ErrorCode, type Logger } from '@chainpipe/runtime';
import { classifyStoreError, type StoreBlockInput, type StoreBlockResult } from '@chainpipe/tx-store';
import { blockMessages, blockOutcome, deliverySource, planFetched, planRecord, type StorePlan, type TxCheck } from './plan';

export interface ChainRawHandlerDeps {
  /**
   * Stores blocks in order, all or none, in one DB transaction (tx-store's storeBlocks bound to
   * the pool, completing what a block's records leave to stored data, such as Bitcoin inputs).
   */
  storeBlocks: (inputs: StoreBlockInput[]) => Promise<StoreBlockResult[]>;
  /**
   * Publishes to chain.tx.v1 (the producer's publishSkippingTooLarge): resolves once the broker
   * acknowledged every message sent, with the ones left out for being alone above the topic's limit.
   */
  publish: (messages: OutgoingMessage<ChainTxMessage>[]) => Promise<TooLargeMessage<ChainTxMessage>[]>;
  checkTx: TxCheck;
  /**
   * Networks of one call stored side by side (default 1): a partition carries several networks,
   * and their rows and block locks are disjoint, so one network's DB transaction need not wait
   * for another's. Each takes a pool connection.
   */
  networksConcurrently?: number;
  logger: Logger;
  registry: Registry;
}

/**
 * The blocks of one handler call share a DB transaction up to about this many transactions (a
 * larger block has one of its own): one commit for many small blocks, and locks held for a
 * bounded time.
 */
const MAX_TXS_PER_DB_TRANSACTION = 5_000;

const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** How many issues of one record are logged in full; the metric counts all of them. */
const LOGGED_ISSUES = 5;

function parserMetrics(registry: Registry) {
  return {
    records: new Counter({ name: 'chainpipe_parser_records_total', help: 'Records by outcome, chain.raw.v1 deliveries and chain.fetched.v1 origin look-ups alike (stored, partial = stored and dead-lettered for the unreadable rest, dead_letter, empty)', labelNames: ['network', 'outcome'], registers: [registry] }),
    blocks: new Counter({ name: 'chainpipe_parser_blocks_stored_total', help: 'Blocks stored, by kind (new, known = replay, reorg = replaced another block of its height)', labelNames: ['network', 'kind'], registers: [registry] }),
    txs: new Counter({ name: 'chainpipe_parser_txs_stored_total', help: 'Transactions stored (replays included)', labelNames: ['network'], registers: [registry] }),
    changed: new Counter({ name: 'chainpipe_parser_txs_changed_total', help: 'Transactions whose stored record a delivery changed (new, merged with more information, moved): the ones published', labelNames: ['network'], registers: [registry] }),
    orphaned: new Counter({ name: 'chainpipe_parser_txs_orphaned_total', help: 'Transactions orphaned by a reorg', labelNames: ['network'], registers: [registry] }),
    issues: new Counter({ name: 'chainpipe_parser_parse_issues_total', help: 'Blocks or transactions the parsers could not read (the rest of the payload is stored)', labelNames: ['network'], registers: [registry] }),
    skipped: new Counter({ name: 'chainpipe_parser_chain_tx_skipped_total', help: 'Stored transactions not published to chain.tx (message above the topic limit)', labelNames: ['network'], registers: [registry] }),
    parseDuration: new Histogram({ name: 'chainpipe_parser_parse_duration_seconds', help: 'Parse time of one raw record', labelNames: ['network'], buckets: DURATION_BUCKETS, registers: [registry] }),
    storeDuration: new Histogram({ name: 'chainpipe_parser_store_duration_seconds', help: 'Time to store one block (its share of the DB transaction that stored the blocks of a handler call)', labelNames: ['network'], buckets: DURATION_BUCKETS, registers: [registry] }),
    // The pipeline's end-to-end latency as far as the parser sees it: from chain-ingest's
    // acknowledgement (the record's received_at header) to its transactions acknowledged on chain.tx.v1.
    ingestToPublish: new Histogram({ name: 'chainpipe_parser_ingest_to_publish_seconds', help: 'From chain-ingest receiving a delivery to its transactions published on chain.tx.v1 (replays included)', labelNames: ['network'], buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300], registers: [registry] }),
  };
}

export interface ParserHandlers {
  /** chain.raw.v1: the streamers' deliveries. */
  chainRaw: BatchHandler<Buffer>;
  /** chain.fetched.v1: transactions tx-gateway fetched from a chain origin. */
  chainFetched: BatchHandler<ChainFetchedMessage>;
}

/**
 * The chain-parser's handlers: plan each record (chain.raw.v1: parse the delivery;
 * chain.fetched.v1: the one fetched transaction as a block-less delivery), store their blocks in
 * record order (each as storeBlock stores it, `changed_by` naming its record; the blocks of a call
 * share one DB transaction, up to MAX_TXS_PER_DB_TRANSACTION), then publish the transactions each
 * record changed (and the ones a reorg orphaned) to chain.tx.v1 and only then return, so the
 * consumer commits offsets after rows and messages are durable. A crash in between replays the
 * records: storing is idempotent and `changed_by` returns the rows the record changed, so the
 * messages go out again (downstream dedupes). Both topics go through this one path, so an
 * origin's answer is merged, published and never hides a later change from the stream.
 *
 * Failures: a record that cannot be parsed, or a block Postgres rejects for its data, is
 * dead-lettered (the rest of the batch goes on: when Postgres rejects a shared DB transaction for
 * its data, its blocks are stored again one DB transaction each, so only the record of the
 * rejected block is dead-lettered, and its later blocks are not stored); a record parsed only in part is stored and
 * dead-lettered too (`PARTIAL_PARSE`), keeping its bytes for a replay; anything else (database or broker down) is a
 * RetryableError and the whole call is retried with backoff.
 */
/**
 * Consecutive groups of the block indexes `of` (in their order), of up to
 * MAX_TXS_PER_DB_TRANSACTION transactions each (a larger block alone).
 */
function groupsOf(blocks: ReadonlyArray<{ input: StoreBlockInput }>, of: readonly number[]): number[][] {
  const groups: number[][] = [];
  let current: number[] = [];
  let txs = 0;
  for (const i of of) {
    const n = blocks[i].input.transactions.length;
    if (current.length && txs + n > MAX_TXS_PER_DB_TRANSACTION) {
      groups.push(current);
      current = [];
      txs = 0;
    }
    current.push(i);
    txs += n;
  }
  if (current.length) groups.push(current);
  return groups;
}

/** The block indexes of each network, in their order: a network's blocks are stored in order, different networks side by side. */
function byNetwork(blocks: ReadonlyArray<{ input: StoreBlockInput }>): number[][] {
  const lanes = new Map<string, number[]>();
  blocks.forEach((b, i) => {
    const network = b.input.network.network;
    const lane = lanes.get(network);
    if (lane) lane.push(i);
    else lanes.set(network, [i]);
  });
  return [...lanes.values()];
}

export function createParserHandlers(deps: ChainRawHandlerDeps): ParserHandlers {
  const metrics = parserMetrics(deps.registry);
  const log = deps.logger.child({ component: 'chain-parser' });
  return {
    chainRaw: storeAndPublish((record: ConsumedRecord<Buffer>) => planRecord(record.value, record.headers, deps.checkTx)),
    // The consumer checked the whole message, its record included, against the topic's schema.
    chainFetched: storeAndPublish((record: ConsumedRecord<ChainFetchedMessage>) => planFetched(record.value)),
  };

  function storeAndPublish<T>(planOf: (record: ConsumedRecord<T>) => StorePlan): BatchHandler<T> {
    return async (records) => {
      const deadLetters: DeadLetter[] = [];
      const outgoing: OutgoingMessage<ChainTxMessage>[] = [];
      const stored: Array<{ network: string; receivedAt: number }> = [];
      const dead = (record: ConsumedRecord<T>, network: string, code: ErrorCode, reason: string) => {
        deadLetters.push({ record: record as ConsumedRecord<unknown>, code, reason });
        metrics.records.inc({ network, outcome: 'dead_letter' });
      };

      // 1. Plan every record: parse, contract checks; dead letters and empty records are done here.
      const planned: Array<{ record: ConsumedRecord<T>; plan: Extract<StorePlan, { kind: 'store' }> }> = [];
      for (const record of records) {
        const endParse = metrics.parseDuration.startTimer();
        const plan = planOf(record);
        endParse({ network: plan.kind === 'dead' ? plan.network : plan.network.network });
        if (plan.kind === 'dead') {
          dead(record, plan.network, plan.code, plan.reason);
          continue;
        }
        const network = plan.network.network;
        if (plan.issues.length) {
          metrics.issues.inc({ network }, plan.issues.length);
          log.warn({ msg: 'parse_issues', network, partition: record.partition, offset: record.offset, count: plan.issues.length, issues: plan.issues.slice(0, LOGGED_ISSUES) });
        }
        if (!plan.blocks.length) {
          metrics.records.inc({ network, outcome: 'empty' });
          continue;
        }
        planned.push({ record, plan });
      }

      // 2. Store every block, in record order.
      const blocks = planned.flatMap(({ record, plan }, at) => plan.blocks.map((b) => ({ at, input: { ...b, source: deliverySource(record) } })));
      const outcomes = await storeInGroups(blocks);

      // 3. Per record: its blocks' messages, or its dead letter.
      let k = 0;
      for (const [at, { record, plan }] of planned.entries()) {
        const network = plan.network.network;
        let rejected = false;
        for (const input of plan.blocks) {
          const outcome = outcomes[k++];
          if (rejected) continue;
          if (outcome instanceof Error) {
            const reason = `block ${input.block.height ?? '?'} ${input.block.hash ?? ''} rejected by the database: ${errorMessage(outcome)}`;
            dead(record, network, 'STORE_REJECTED', reason);
            rejected = true;
            continue;
          }
          if (!outcome) throw new Error(`record ${at}: block ${input.block.height ?? '?'} neither stored nor rejected`);
          const result = outcome;
          const kind = blockOutcome(result);
          metrics.blocks.inc({ network, kind });
          metrics.txs.inc({ network }, result.stored.length);
          metrics.changed.inc({ network }, result.changed.length);
          if (result.orphaned.length) metrics.orphaned.inc({ network }, result.orphaned.length);
          if (kind === 'reorg') {
            log.info({ msg: 'block_reorg', network, height: input.block.height, hash: input.block.hash, replaced: result.replacedBlocks, orphanedTxs: result.orphaned.length, flagged: input.reorged ?? false });
          }
          outgoing.push(...blockMessages(result));
        }
        if (rejected) continue;
        if (plan.issues.length) {
          // The good transactions are stored; the delivery also goes to the DLQ so that its bytes
          // survive for a replay once the parser is fixed (storing again is idempotent).
          const summary = plan.issues.slice(0, LOGGED_ISSUES).map((i) => `${i.tx_hash ?? `block ${i.block_index} tx ${i.tx_index ?? '?'}`}: ${i.reason}`);
          deadLetters.push({ record: record as ConsumedRecord<unknown>, code: 'PARTIAL_PARSE', reason: `${plan.issues.length} unreadable item(s), the rest stored: ${summary.join('; ')}` });
          metrics.records.inc({ network, outcome: 'partial' });
        } else {
          metrics.records.inc({ network, outcome: 'stored' });
        }
        const receivedAt = Number(record.headers.received_at);
        if (Number.isFinite(receivedAt) && receivedAt > 0) stored.push({ network, receivedAt });
      }

      await publishAll(outgoing);
      const now = Date.now();
      for (const s of stored) metrics.ingestToPublish.observe({ network: s.network }, Math.max(0, now - s.receivedAt) / 1000);
      return { deadLetters };
    };
  }

  /**
   * Stores the blocks (`at`: their record's place in the call) in consecutive groups of up to
   * MAX_TXS_PER_DB_TRANSACTION transactions of one network, one DB transaction each (networks side
   * by side, see `networksConcurrently`). Gives, per block in order,
   * its result, or the error for which Postgres rejected its data, or nothing for a block not
   * stored because an earlier block of its record was rejected. When Postgres rejects a group
   * for its data, its blocks are stored again one DB transaction each to find the culprit. Any
   * other failure is a RetryableError (the whole call is retried: storing is idempotent).
   */
  async function storeInGroups(blocks: Array<{ at: number; input: StoreBlockInput }>): Promise<Array<StoreBlockResult | Error | undefined>> {
    const outcomes: Array<StoreBlockResult | Error | undefined> = new Array(blocks.length);
    const rejectedRecords = new Set<number>();
    const store = async (group: number[]): Promise<void> => {
      const t0 = performance.now();
      const results = await deps.storeBlocks(group.map((i) => blocks[i].input));
      // Each block is timed as its share (by transactions) of the DB transaction.
      const seconds = (performance.now() - t0) / 1000;
      const txs = group.reduce((n, i) => n + blocks[i].input.transactions.length, 0);
      group.forEach((i, j) => {
        outcomes[i] = results[j];
        metrics.storeDuration.observe({ network: blocks[i].input.network.network }, txs ? (seconds * blocks[i].input.transactions.length) / txs : seconds / group.length);
      });
    };
    const retryable = (err: unknown, group: number[]) => {
      const first = blocks[group[0]].input;
      const what = group.length === 1 ? `block ${first.block.height ?? '?'} of ${first.network.network}` : `${group.length} blocks from block ${first.block.height ?? '?'} of ${first.network.network}`;
      return new RetryableError(`storing ${what} failed: ${errorMessage(err)}`, 'STORE_FAILED', { cause: err });
    };
    // One lane per network, in block order within it; lanes run side by side, at most
    // `networksConcurrently` at a time. A lane that fails stops; the others finish before the
    // error is thrown, so a retry of the call never meets a store of this one still running.
    // What a finished lane committed is stored again by the retry (idempotent, `changed_by`
    // returns its changed rows), so its messages still go out.
    const storeLane = async (lane: number[]): Promise<void> => {
      for (const group of groupsOf(blocks, lane)) {
        const live = group.filter((i) => !rejectedRecords.has(blocks[i].at));
        if (!live.length) continue;
        try {
          await store(live);
          continue;
        } catch (err) {
          if (classifyStoreError(err) !== 'data') throw retryable(err, live);
        }
        for (const i of live) {
          if (rejectedRecords.has(blocks[i].at)) continue;
          try {
            await store([i]);
          } catch (err) {
            if (classifyStoreError(err) !== 'data') throw retryable(err, [i]);
            outcomes[i] = err instanceof Error ? err : new Error(errorMessage(err));
            rejectedRecords.add(blocks[i].at);
          }
        }
      }
    };
    const failures: unknown[] = [];
    await eachBounded(byNetwork(blocks), deps.networksConcurrently ?? 1, async (lane) => {
      // After a failure no further lane starts: the call is retried anyway.
      if (failures.length) return;
      await storeLane(lane).catch((err: unknown) => {
        failures.push(err);
      });
    });
    if (failures.length) throw failures[0];
    return outcomes;
  }

  /**
   * One publish call: the producer cuts it into requests within chain.tx.v1's limit. A message
   * that alone exceeds the limit can never be accepted: its row stays stored and queryable, and
   * it is counted and logged here instead of failing the records of the batch.
   */
  async function publishAll(outgoing: OutgoingMessage<ChainTxMessage>[]): Promise<void> {
    if (!outgoing.length) return;
    const tooLarge = await deps.publish(outgoing);
    for (const { message, key, bytes, limit } of tooLarge) {
      metrics.skipped.inc({ network: message.value.network });
      log.error({ msg: 'chain_tx_too_large', network: message.value.network, id: message.value.id, key, bytes, limit });
    }
  }
}
