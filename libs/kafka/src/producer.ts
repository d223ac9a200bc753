import { CompressionTypes, Partitioners, type Kafka, type Message, type Producer } from 'kafkajs';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { NonRetryableError, RetryableError, errorMessage, type HealthReport, type Logger } from '@chainpipe/runtime';
import type { Contracts, TopicSpec } from '@chainpipe/contracts';
import { BrokerLink, metadataProbe } from './broker-link';
import { topicName } from './client';

export interface OutgoingMessage<T> {
  key: string | null;
  value: T;
  headers?: Record<string, string>;
}

export interface TopicProducerOptions {
  kafka: Kafka;
  contracts: Contracts;
  logger: Logger;
  registry: Registry;
  topicPrefix?: string;
  /** How long a message may wait for others to share its request. */
  lingerMs?: number;
  /**
   * Upper bound of one request's payload. Messages to one partition travel as one record batch,
   * which the broker refuses past `message.max.bytes`: keep this below it.
   */
  maxBatchBytes?: number;
  maxBatchMessages?: number;
  /** A publish not acknowledged by then rejects with a RetryableError. */
  publishTimeoutMs?: number;
  /** Probe period of the broker link while the broker is down (see BrokerLink). */
  downProbeMs?: number;
}

interface Pending {
  topic: string;
  messages: Message[];
  bytes: number;
  resolve: () => void;
  reject: (err: Error) => void;
}

/**
 * A producer that validates every message against its topic's schema before it leaves the
 * process, groups concurrent publishes into one request (linger), and resolves each publish
 * only when the broker acknowledged it (acks=all). A message failing its schema is rejected
 * with a NonRetryableError and never sent.
 */
export class TopicProducer {
  private readonly producer: Producer;
  private readonly opts: Required<Omit<TopicProducerOptions, 'kafka' | 'contracts' | 'logger' | 'registry' | 'downProbeMs'>>;
  private queue: Pending[] = [];
  private queuedBytes = 0;
  private queuedMessages = 0;
  private timer?: NodeJS.Timeout;
  private inFlight = new Set<Promise<void>>();
  private connected = false;
  private lastError?: string;
  private readonly link: BrokerLink;
  private readonly probe: ReturnType<typeof metadataProbe>;
  private readonly published: Counter<'topic'>;
  private readonly failed: Counter<'topic' | 'reason'>;
  private readonly latency: Histogram<'topic'>;

  constructor(private readonly deps: TopicProducerOptions) {
    this.opts = {
      topicPrefix: deps.topicPrefix ?? '',
      lingerMs: deps.lingerMs ?? 2,
      maxBatchBytes: deps.maxBatchBytes ?? 15 * 1024 * 1024,
      maxBatchMessages: deps.maxBatchMessages ?? 1000,
      publishTimeoutMs: deps.publishTimeoutMs ?? 10_000,
    };
    this.producer = deps.kafka.producer({
      allowAutoTopicCreation: false,
      // murmur2 on the key, as the Java client: a key lands on the same partition from any client.
      createPartitioner: Partitioners.DefaultPartitioner,
      // No retries inside kafkajs: its retry of a batch skips every broker that answered the
      // failed attempt, so when a partition's leader dies and leadership moves to one of those,
      // that partition's messages are never sent and sendBatch still resolves (tulios/kafkajs#1303,
      // unfixed in 2.2.4). sendWithRetry retries the whole batch instead.
      retry: { retries: 0 },
    });
    this.producer.on(this.producer.events.DISCONNECT, () => {
      this.connected = false;
    });
    const reachable = new Gauge({ name: 'chainpipe_kafka_broker_reachable', help: '1 while the producer reaches a broker, 0 while it knows it cannot', registers: [deps.registry] });
    reachable.set(1);
    this.probe = metadataProbe(deps.kafka);
    this.link = new BrokerLink({
      probe: this.probe.probe,
      downProbeMs: deps.downProbeMs,
      onChange: (up, detail) => {
        reachable.set(up ? 1 : 0);
        if (up) deps.logger.info({ msg: 'kafka_broker_reachable' });
        else deps.logger.warn({ msg: 'kafka_broker_unreachable', err: detail });
      },
    });
    this.published = new Counter({ name: 'chainpipe_kafka_produced_messages_total', help: 'Messages acknowledged by the broker', labelNames: ['topic'], registers: [deps.registry] });
    this.failed = new Counter({ name: 'chainpipe_kafka_produce_failures_total', help: 'Messages that failed to publish', labelNames: ['topic', 'reason'], registers: [deps.registry] });
    this.latency = new Histogram({
      name: 'chainpipe_kafka_produce_duration_seconds',
      help: 'From publish() to broker acknowledgement',
      labelNames: ['topic'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [deps.registry],
    });
  }

  async connect(): Promise<void> {
    await this.producer.connect();
    this.connected = true;
    this.link.succeeded();
    this.link.start();
  }

  /**
   * `degraded` while not connected or while the broker is known to be unreachable: the app
   * should get no traffic (not ready), but a restart would not help, so it stays alive.
   */
  health(): HealthReport {
    if (!this.connected) return { state: 'degraded', detail: this.lastError ?? 'not connected' };
    return this.link.health();
  }

  /**
   * False while the broker is known to be unreachable (a send or a probe failed, and no probe
   * has been answered since). Callers that would rather refuse work than wait for the publish
   * timeout (ingestion) check it first.
   */
  get reachable(): boolean {
    return this.connected && this.link.up;
  }

  /** Encodes and validates; throws NonRetryableError for a message that breaks its contract. */
  encode<T>(spec: TopicSpec<T>, msg: OutgoingMessage<T>): Message {
    if (spec.encoding === 'raw') {
      if (!Buffer.isBuffer(msg.value)) throw new NonRetryableError(`${spec.name}: raw topics take a Buffer`, 'PRODUCE_BAD_VALUE');
      const check = this.deps.contracts.validate(spec.schema, msg.headers ?? {});
      if (!check.ok) throw new NonRetryableError(`${spec.name} headers: ${check.errors}`, 'PRODUCE_SCHEMA_INVALID');
      return { key: msg.key, value: msg.value, headers: msg.headers };
    }
    const check = this.deps.contracts.validate(spec.schema, msg.value);
    if (!check.ok) throw new NonRetryableError(`${spec.name}: ${check.errors}`, 'PRODUCE_SCHEMA_INVALID');
    return { key: msg.key, value: JSON.stringify(msg.value), headers: msg.headers };
  }

  /** Publishes to a registry topic; resolves once the broker has acknowledged every message. */
  publish<T>(spec: TopicSpec<T>, messages: OutgoingMessage<T>[]): Promise<void> {
    let encoded: Message[];
    try {
      encoded = messages.map((m) => this.encode(spec, m));
    } catch (err) {
      this.failed.inc({ topic: spec.name, reason: 'schema' }, messages.length);
      return Promise.reject(err);
    }
    return this.publishEncoded(topicName(spec, this.opts.topicPrefix), encoded, spec.name);
  }

  /** Publishes already-encoded messages to a physical topic (dead letters, replays). */
  publishEncoded(topic: string, messages: Message[], metricTopic = topic): Promise<void> {
    if (messages.length === 0) return Promise.resolve();
    const bytes = messages.reduce((n, m) => n + sizeOf(m), 0);
    const end = this.latency.startTimer({ topic: metricTopic });
    const acked = new Promise<void>((resolve, reject) => {
      this.enqueue({ topic, messages, bytes, resolve, reject });
    });
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new RetryableError(`publish to ${topic} not acknowledged in ${this.opts.publishTimeoutMs} ms`, 'PRODUCE_TIMEOUT')),
        this.opts.publishTimeoutMs,
      );
    });
    return Promise.race([acked, timeout]).then(
      () => {
        clearTimeout(timer);
        end();
        this.published.inc({ topic: metricTopic }, messages.length);
      },
      (err: Error) => {
        clearTimeout(timer);
        if ((err as RetryableError).code === 'PRODUCE_TIMEOUT') this.link.failed(err);
        this.failed.inc({ topic: metricTopic, reason: err instanceof RetryableError ? 'timeout' : 'broker' }, messages.length);
        throw err;
      },
    );
  }

  private enqueue(p: Pending): void {
    if (this.queue.length && this.queuedBytes + p.bytes > this.opts.maxBatchBytes) this.flush();
    this.queue.push(p);
    this.queuedBytes += p.bytes;
    this.queuedMessages += p.messages.length;
    if (this.queuedBytes >= this.opts.maxBatchBytes || this.queuedMessages >= this.opts.maxBatchMessages) this.flush();
    else if (!this.timer) this.timer = setTimeout(() => this.flush(), this.opts.lingerMs);
  }

  private flush(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    const batch = this.queue;
    if (!batch.length) return;
    this.queue = [];
    this.queuedBytes = 0;
    this.queuedMessages = 0;
    const byTopic = new Map<string, Message[]>();
    for (const p of batch) {
      const list = byTopic.get(p.topic) ?? [];
      list.push(...p.messages);
      byTopic.set(p.topic, list);
    }
    const send = this.sendWithRetry([...byTopic].map(([topic, messages]) => ({ topic, messages })))
      .then(
        () => {
          this.connected = true;
          this.lastError = undefined;
          this.link.succeeded();
          for (const p of batch) p.resolve();
        },
        (err: unknown) => {
          this.lastError = errorMessage(err);
          if (isReachabilityError(err)) this.link.failed(err);
          this.deps.logger.warn({ msg: 'kafka_publish_failed', err: this.lastError, messages: batch.length });
          const wrapped = new RetryableError(`kafka publish failed: ${this.lastError}`, 'PRODUCE_FAILED', { cause: err });
          for (const p of batch) p.reject(wrapped);
        },
      )
      .finally(() => this.inFlight.delete(send));
    this.inFlight.add(send);
  }

  /**
   * One batch, acks=all, sent whole on every attempt (a fresh sendBatch maps each partition to
   * its current leader; kafkajs refreshed the metadata before it failed). A partition acknowledged
   * by an earlier attempt gets its messages again: at least once, never lost. Up to 3 retries,
   * 200 ms doubling to 2 s, kept well inside the publish timeout so that a down broker surfaces as
   * an error instead of a request parked for minutes.
   */
  private async sendWithRetry(topicMessages: { topic: string; messages: Message[] }[]): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        await this.producer.sendBatch({ acks: -1, compression: CompressionTypes.None, topicMessages });
        return;
      } catch (err) {
        if (!isReachabilityError(err) || attempt >= 3) throw err;
        await new Promise((r) => setTimeout(r, Math.min(200 * 2 ** attempt, 2_000)));
      }
    }
  }

  /** Sends what is queued, waits for every request in flight, then disconnects. */
  async disconnect(): Promise<void> {
    this.flush();
    await Promise.allSettled([...this.inFlight]);
    this.link.stop();
    await this.probe.close();
    await this.producer.disconnect();
    this.connected = false;
  }
}

/**
 * Whether a failed send says the broker cannot be reached (refused or dropped connections,
 * timeouts, no leader, too few in-sync replicas) rather than that the request itself was bad (a
 * message too large): kafkajs marks the former retriable, also under the "retries exceeded"
 * error that wraps it.
 */
export function isReachabilityError(err: unknown): boolean {
  for (let e = err as { retriable?: boolean; cause?: unknown; originalError?: unknown } | undefined, depth = 0; e && depth < 5; depth++) {
    if (e.retriable === true) return true;
    e = (e.originalError ?? e.cause) as typeof e;
  }
  return false;
}

function sizeOf(m: Message): number {
  const v = m.value;
  let n = v == null ? 0 : typeof v === 'string' ? Buffer.byteLength(v) : v.length;
  if (m.key) n += typeof m.key === 'string' ? Buffer.byteLength(m.key) : m.key.length;
  for (const [k, hv] of Object.entries(m.headers ?? {})) n += k.length + (typeof hv === 'string' ? hv.length : Buffer.isBuffer(hv) ? hv.length : 0);
  return n + 70; // record overhead
}
