import type { Consumer, Kafka, KafkaMessage, Message } from 'kafkajs';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { NonRetryableError, errorMessage, systemClock, type Clock, type HealthReport, type Logger } from '@chainpipe/runtime';
import { dlqName, type Contracts, type TopicSpec } from '@chainpipe/contracts';
import { topicName } from './client';
import type { BatchHandler, ConsumedRecord, DeadLetter } from './handler';
import { HandlerRetry, RetryBudgetExhausted, type RetryPolicy } from './handler-retry';
import type { TopicProducer } from './producer';
import { chunk, decodeHeaders, nextOffset } from './offsets';

export interface BatchConsumerOptions<T> {
  kafka: Kafka;
  groupId: string;
  spec: TopicSpec<T>;
  contracts: Contracts;
  /** Used for dead letters. */
  producer: TopicProducer;
  handler: BatchHandler<T>;
  logger: Logger;
  registry: Registry;
  topicPrefix?: string;
  /** Upper bound of records handed to one handler call (and of work lost to a crash). */
  maxRecordsPerCall?: number;
  /**
   * Partitions whose chunks are handled at the same time (default 1). Each partition's chunks
   * stay in order and are committed on their own; only for handlers whose writes of different
   * partitions never touch the same rows (keyed topics whose key is the unit of the writes).
   */
  partitionsConcurrently?: number;
  retry?: RetryPolicy;
  /** Called when the consumer cannot go on (retries exhausted, kafkajs crash): the app stops. */
  onFatal: (reason: string, err: unknown) => void;
  fromBeginning?: boolean;
  /**
   * The group belongs to this process alone (every copy reads every record: a live fan-out):
   * it is deleted once the consumer stopped, so no dead group is left behind per start.
   */
  removeGroupOnStop?: boolean;
  sessionTimeoutMs?: number;
  /** No heartbeat or batch for this long makes the consumer unhealthy. */
  stallMs?: number;
  /** Time of the retry backoff and of the stall check. */
  clock?: Pick<Clock, 'now' | 'sleep'>;
}

/** Metrics of every consumer, declared once per registry. */
function consumerMetrics(registry: Registry) {
  const existing = registry.getSingleMetric('chainpipe_consumer_batch_size');
  if (existing) {
    return {
      batchSize: existing as Histogram<'topic' | 'group'>,
      batchDuration: registry.getSingleMetric('chainpipe_consumer_batch_duration_seconds') as Histogram<'topic' | 'group'>,
      messages: registry.getSingleMetric('chainpipe_consumer_messages_total') as Counter<'topic' | 'group' | 'outcome'>,
      dlq: registry.getSingleMetric('chainpipe_consumer_dlq_total') as Counter<'topic' | 'group' | 'code'>,
      retries: registry.getSingleMetric('chainpipe_consumer_retries_total') as Counter<'topic' | 'group'>,
      rebalances: registry.getSingleMetric('chainpipe_consumer_rebalances_total') as Counter<'group'>,
      lag: registry.getSingleMetric('chainpipe_consumer_lag') as Gauge<'topic' | 'group' | 'partition'>,
    };
  }
  return {
    batchSize: new Histogram({ name: 'chainpipe_consumer_batch_size', help: 'Records per handler call', labelNames: ['topic', 'group'], buckets: [1, 5, 10, 25, 50, 100, 250, 500, 1000], registers: [registry] }),
    batchDuration: new Histogram({ name: 'chainpipe_consumer_batch_duration_seconds', help: 'Handler call duration including dead letters and commit', labelNames: ['topic', 'group'], buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30], registers: [registry] }),
    messages: new Counter({ name: 'chainpipe_consumer_messages_total', help: 'Records consumed by outcome', labelNames: ['topic', 'group', 'outcome'], registers: [registry] }),
    dlq: new Counter({ name: 'chainpipe_consumer_dlq_total', help: 'Records sent to the dead-letter topic', labelNames: ['topic', 'group', 'code'], registers: [registry] }),
    retries: new Counter({ name: 'chainpipe_consumer_retries_total', help: 'Handler calls retried after a retryable error', labelNames: ['topic', 'group'], registers: [registry] }),
    rebalances: new Counter({ name: 'chainpipe_consumer_rebalances_total', help: 'Consumer group joins (each rebalance ends in one)', labelNames: ['group'], registers: [registry] }),
    lag: new Gauge({ name: 'chainpipe_consumer_lag', help: 'Records behind the high watermark after the last batch', labelNames: ['topic', 'group', 'partition'], registers: [registry] }),
  };
}

/** The first wait before a consumer starts again after a crash kafkajs does not restart from, and the longest. */
const RESTART_FIRST_MS = 1_000;
const RESTART_MAX_MS = 10_000;

/**
 * An error (or one of its causes) that says the broker could not be reached: no connection, no
 * group coordinator, no broker in the metadata. The broker coming back ends it.
 */
export function brokerUnreachable(err: unknown): boolean {
  for (let e = err as { name?: unknown; cause?: unknown; originalError?: unknown } | undefined, depth = 0; e && depth < 10; depth++) {
    if (typeof e.name === 'string' && UNREACHABLE.has(e.name)) return true;
    e = (e.cause ?? e.originalError) as typeof e;
  }
  return false;
}

const UNREACHABLE = new Set(['KafkaJSGroupCoordinatorNotFound', 'KafkaJSConnectionError', 'KafkaJSConnectionClosedError', 'KafkaJSBrokerNotFound', 'KafkaJSRequestTimeoutError']);

/**
 * An `eachBatch` consumer with manual offsets: a record's offset is resolved and committed only
 * after the handler finished with it and every produce it made (dead letters included) was
 * acknowledged. So a crash at any moment replays, never skips; handlers make that harmless by
 * writing idempotently.
 */
export class BatchConsumer<T> {
  private readonly consumer: Consumer;
  private readonly topic: string;
  private readonly metrics: ReturnType<typeof consumerMetrics>;
  private readonly abort = new AbortController();
  /** The group was joined and no crash happened since. */
  private joined = false;
  /** A fetch started since the last join: the consumer is really consuming. */
  private fetching = false;
  /** kafkajs crashed and is restarting the consumer itself (broker down, say): why. */
  private restarting?: string;
  /** The consumer cannot go on (handler past its retry budget, a crash kafkajs will not restart). */
  private fatal?: string;
  private readonly clock: Pick<Clock, 'now' | 'sleep'>;
  private lastActivity: number;
  private readonly retrying: HandlerRetry<T>;
  private readonly maxRecords: number;
  private readonly log: Logger;

  constructor(private readonly opts: BatchConsumerOptions<T>) {
    this.topic = topicName(opts.spec, opts.topicPrefix ?? '');
    this.metrics = consumerMetrics(opts.registry);
    this.clock = opts.clock ?? systemClock;
    this.lastActivity = this.clock.now();
    this.maxRecords = opts.maxRecordsPerCall ?? 200;
    this.log = opts.logger.child({ component: 'consumer', topic: this.topic, group: opts.groupId });
    this.retrying = new HandlerRetry({
      handler: opts.handler,
      policy: opts.retry ?? { retries: 8, initialMs: 200, maxMs: 10_000 },
      signal: this.abort.signal,
      logger: this.log,
      onRetry: () => this.metrics.retries.inc({ topic: opts.spec.name, group: opts.groupId }),
      clock: this.clock,
    });
    this.consumer = opts.kafka.consumer({
      groupId: opts.groupId,
      sessionTimeout: opts.sessionTimeoutMs ?? 30_000,
      heartbeatInterval: Math.floor((opts.sessionTimeoutMs ?? 30_000) / 10),
      allowAutoTopicCreation: false,
      // Raw blocks reach 16 MiB; the broker returns at least one whole message anyway (KIP-74).
      maxBytesPerPartition: 16 * 1024 * 1024,
      maxBytes: 32 * 1024 * 1024,
      retry: { retries: 5 },
    });
    // Health follows the client's own state both ways: a crash kafkajs restarts from makes the
    // consumer not ready, and the next join and fetch make it ready again.
    const { GROUP_JOIN, FETCH_START, HEARTBEAT, CRASH } = this.consumer.events;
    this.consumer.on(GROUP_JOIN, (e) => {
      this.joined = true;
      // A member with no partition (more members than partitions) has nothing to fetch.
      this.fetching = Object.values(e.payload.memberAssignment ?? {}).every((parts) => parts.length === 0);
      this.lastActivity = this.clock.now();
      this.metrics.rebalances.inc({ group: opts.groupId });
    });
    this.consumer.on(FETCH_START, () => {
      this.lastActivity = this.clock.now();
      if (!this.joined) return;
      this.fetching = true;
      if (this.restarting) this.log.info({ msg: 'consumer_recovered', after: this.restarting });
      this.restarting = undefined;
    });
    this.consumer.on(HEARTBEAT, () => {
      this.lastActivity = this.clock.now();
    });
    this.consumer.on(CRASH, (e) => {
      // A chunk left uncommitted by stop() ends the run this way; it is not a failure.
      if (this.abort.signal.aborted) return;
      const reason = errorMessage(e.payload.error);
      this.joined = false;
      this.fetching = false;
      if (e.payload.restart) {
        this.restarting = reason;
        this.log.warn({ msg: 'consumer_restarting', err: reason });
        return;
      }
      if (brokerUnreachable(e.payload.error)) {
        // kafkajs gives up for good when a rejoin finds no group coordinator because the broker
        // is away (it counts that error as not retriable): the consumer starts again itself,
        // from the committed offsets, as kafkajs does after a retriable crash.
        this.restarting = reason;
        this.log.warn({ msg: 'consumer_restarting', err: reason, by: 'consumer' });
        this.restartLater(RESTART_FIRST_MS);
        return;
      }
      this.fatal = reason;
      opts.onFatal('kafka consumer crashed', e.payload.error);
    });
  }

  private restartTimer: NodeJS.Timeout | undefined;

  /** Starts the consumer again in `ms`; while the broker stays away, again with the wait doubled (to RESTART_MAX_MS). */
  private restartLater(ms: number): void {
    clearTimeout(this.restartTimer);
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      if (this.abort.signal.aborted) return;
      this.start().catch((err: unknown) => {
        if (this.abort.signal.aborted) return;
        if (brokerUnreachable(err)) return this.restartLater(Math.min(ms * 2, RESTART_MAX_MS));
        this.fatal = errorMessage(err);
        this.opts.onFatal('kafka consumer could not start again', err);
      });
    }, ms);
  }

  async start(): Promise<void> {
    await this.consumer.connect();
    await this.consumer.subscribe({ topics: [this.topic], fromBeginning: this.opts.fromBeginning ?? true });
    await this.consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: this.opts.partitionsConcurrently ?? 1,
      eachBatch: async ({ batch, resolveOffset, heartbeat, isRunning, isStale, commitOffsetsIfNecessary }) => {
        for (const part of chunk(batch.messages, this.maxRecords)) {
          // Between chunks only: a started chunk is finished (and committed) even while stopping.
          if (!isRunning() || isStale()) return;
          const t0 = process.hrtime.bigint();
          try {
            await this.processChunk(batch.topic, batch.partition, part, heartbeat);
          } catch (err) {
            // Only the handler's own give-up stops the app. A kafkajs error (a heartbeat or a
            // dead letter's publish while the broker is away, a rebalance) goes back to kafkajs,
            // which restarts the consumer from the last commit: the chunk is replayed, not lost.
            if (err instanceof RetryBudgetExhausted) {
              this.fatal = errorMessage(err.cause);
              this.opts.onFatal('consumer handler failed past its retry budget', err.cause);
            }
            throw err;
          }
          const last = part[part.length - 1].offset;
          resolveOffset(last);
          // Commit through the batch's own function: kafkajs' consumer.commitOffsets() silently
          // does nothing once stop() began, which would lose the commit of a drained chunk.
          await commitOffsetsIfNecessary({ topics: [{ topic: batch.topic, partitions: [{ partition: batch.partition, offset: nextOffset(last) }] }] });
          await heartbeat();
          this.lastActivity = this.clock.now();
          const labels = { topic: this.opts.spec.name, group: this.opts.groupId };
          this.metrics.batchSize.observe(labels, part.length);
          this.metrics.batchDuration.observe(labels, Number(process.hrtime.bigint() - t0) / 1e9);
          const lag = BigInt(batch.highWatermark) - BigInt(nextOffset(last));
          this.metrics.lag.set({ ...labels, partition: String(batch.partition) }, Number(lag > 0n ? lag : 0n));
        }
      },
    });
  }

  private decode(topic: string, partition: number, m: KafkaMessage): ConsumedRecord<T> {
    const headers = decodeHeaders(m.headers);
    const base = { topic, partition, offset: m.offset, key: m.key ? m.key.toString() : null, headers, timestamp: m.timestamp };
    const { spec, contracts } = this.opts;
    if (spec.encoding === 'raw') {
      const check = contracts.validate(spec.schema, headers);
      if (!check.ok) throw new NonRetryableError(`headers: ${check.errors}`, 'SCHEMA_INVALID');
      return { ...base, value: (m.value ?? Buffer.alloc(0)) as unknown as T };
    }
    let value: unknown;
    try {
      value = JSON.parse(m.value ? m.value.toString('utf8') : 'null');
    } catch (err) {
      throw new NonRetryableError(`value is not JSON: ${errorMessage(err)}`, 'JSON_INVALID');
    }
    const check = contracts.validate(spec.schema, value);
    if (!check.ok) throw new NonRetryableError(check.errors, 'SCHEMA_INVALID');
    return { ...base, value: value as T };
  }

  private async processChunk(topic: string, partition: number, messages: KafkaMessage[], heartbeat: () => Promise<void>): Promise<void> {
    const records: ConsumedRecord<T>[] = [];
    const dead: DeadLetter[] = [];
    const raw = new Map<string, KafkaMessage>();
    for (const m of messages) {
      raw.set(m.offset, m);
      try {
        records.push(this.decode(topic, partition, m));
      } catch (err) {
        const placeholder: ConsumedRecord<unknown> = { topic, partition, offset: m.offset, key: m.key?.toString() ?? null, value: null, headers: decodeHeaders(m.headers), timestamp: m.timestamp };
        dead.push({ record: placeholder, reason: errorMessage(err), code: (err as NonRetryableError).code ?? 'DECODE_FAILED' });
      }
    }
    if (records.length) dead.push(...(await this.retrying.run(records, heartbeat)));
    const labels = { topic: this.opts.spec.name, group: this.opts.groupId };
    if (dead.length) await this.deadLetter(dead, raw);
    this.metrics.messages.inc({ ...labels, outcome: 'ok' }, messages.length - dead.length);
    if (dead.length) this.metrics.messages.inc({ ...labels, outcome: 'dlq' }, dead.length);
  }

  private async deadLetter(dead: DeadLetter[], raw: Map<string, KafkaMessage>): Promise<void> {
    const dlqTopic = dlqName(this.topic);
    const now = String(this.clock.now());
    const messages: Message[] = dead.map(({ record, reason, code }) => {
      const original = raw.get(record.offset);
      return {
        key: original?.key ?? null,
        value: original?.value ?? null,
        headers: {
          ...record.headers,
          'dlq-source-topic': record.topic,
          'dlq-source-partition': String(record.partition),
          'dlq-source-offset': record.offset,
          'dlq-consumer-group': this.opts.groupId,
          'dlq-error-code': code ?? 'UNKNOWN',
          'dlq-error': reason.slice(0, 2000),
          'dlq-failed-at': now,
        },
      };
    });
    for (const d of dead) {
      this.metrics.dlq.inc({ topic: this.opts.spec.name, group: this.opts.groupId, code: d.code ?? 'UNKNOWN' });
      this.log.warn({ msg: 'dead_lettered', partition: d.record.partition, offset: d.record.offset, code: d.code, reason: d.reason.slice(0, 300) });
    }
    await this.opts.producer.publishEncoded(dlqTopic, messages, dlqName(this.opts.spec.name));
  }

  /**
   * `error` (a restart cures it) when the consumer gave up, or when it should be consuming but
   * shows no heartbeat or fetch for `stallMs` (a wedged loop); `degraded` (not ready, alive)
   * while kafkajs restarts it after a crash or it has not joined and fetched yet; else `ok`.
   */
  health(): HealthReport {
    if (this.fatal) return { state: 'error', detail: this.fatal };
    if (this.retrying.waitingFor) return { state: 'degraded', detail: `waiting for a dependency: ${this.retrying.waitingFor}` };
    if (this.restarting) return { state: 'degraded', detail: `restarting after: ${this.restarting}` };
    if (!this.joined || !this.fetching) return { state: 'degraded', detail: this.joined ? 'joined, not fetching yet' : 'not joined yet' };
    const idle = this.clock.now() - this.lastActivity;
    if (idle > (this.opts.stallMs ?? 120_000)) return { state: 'error', detail: `no heartbeat or fetch for ${idle} ms` };
    return { state: 'ok' };
  }

  ready(): boolean {
    return this.health().state === 'ok';
  }

  /**
   * Stops fetching, lets the chunk in flight finish and commit, leaves the group. A handler
   * waiting to retry is woken first (kafkajs' disconnect waits for the batch in flight, so a
   * backoff would otherwise overrun the shutdown deadline): its chunk stays uncommitted and is
   * replayed by the next owner.
   */
  async stop(): Promise<void> {
    this.abort.abort();
    clearTimeout(this.restartTimer);
    await this.consumer.disconnect();
    if (this.opts.removeGroupOnStop) await this.removeGroup();
  }

  /** Deletes this process's own group after it left it; a failure is logged, never fatal to the shutdown. */
  private async removeGroup(): Promise<void> {
    const admin = this.opts.kafka.admin();
    try {
      await admin.connect();
      await admin.deleteGroups([this.opts.groupId]);
    } catch (err) {
      this.log.warn({ msg: 'consumer_group_not_removed', err: errorMessage(err) });
    } finally {
      await admin.disconnect().catch(() => undefined);
    }
  }
}
