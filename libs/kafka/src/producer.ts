import { CompressionTypes, type Kafka, type Message, type Producer } from 'kafkajs';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { NonRetryableError, RetryableError, errorMessage, systemClock, type Clock, type HealthReport, type Logger, type Timer } from '@chainpipe/runtime';
import { DEFAULT_MAX_MESSAGE_BYTES, TOPICS, dlqName, formatErrors, type Contracts, type TopicSpec } from '@chainpipe/contracts';
import { needsNewRequest, ownershipProblem, recordBytes, requestFull, splitIntoParts, topicBudget } from './batch-plan';
import { BrokerLink, metadataProbe } from './broker-link';
import { topicName } from './client';
import { Murmur2Partitioner } from './partitioner';

/** A message to publish; its key is the topic's (TopicSpec.key), computed by the producer. */
export interface OutgoingMessage<T> {
  value: T;
  headers?: Record<string, string>;
  /**
   * The value's JSON, when the caller wrote it from the same values (the aggregator writes each
   * candle's JSON once for Redis and its record): sent as is, after the value is checked.
   */
  json?: string;
}

export interface PublishOptions {
  /**
   * The caller checked each message's stored record (the spec's `storedRecord`, e.g. chain.tx.v1's
   * `tx`) against its schema before storing it: only the envelope is checked here. Ignored for
   * topics without a stored record (their whole schema is checked).
   */
  recordChecked?: boolean;
}

export interface TooLargeMessage<T> {
  message: OutgoingMessage<T>;
  key: string;
  /** Its record size and the topic's `maxMessageBytes`. */
  bytes: number;
  limit: number;
}

export interface TopicProducerOptions {
  kafka: Kafka;
  contracts: Contracts;
  logger: Logger;
  registry: Registry;
  topicPrefix?: string;
  /**
   * The app publishing (its runService name): publish() refuses a topic whose `producers` does
   * not name it. Unset (tests, tools): any topic.
   */
  app?: string;
  /**
   * How long a message may wait for others to share its request (default 2). 0: only the
   * publishes of the same event-loop turn share it (it leaves once the turn ends), for apps that
   * publish once per consumer call and wait for it, where any wait is latency.
   */
  lingerMs?: number;
  /**
   * Messages of one request. Bytes need no setting: each topic's messages in one request stay
   * within its `maxMessageBytes` (batch-plan.ts).
   */
  maxBatchMessages?: number;
  /** A publish not acknowledged by then rejects with a RetryableError. */
  publishTimeoutMs?: number;
  /** Probe period of the broker link while the broker is down (see BrokerLink). */
  downProbeMs?: number;
  /** Time of the publish timeout, the send retry backoff and the broker link. */
  clock?: Clock;
}

interface Pending {
  topic: string;
  messages: Message[];
  bytes: number;
  /** The topic's budget (batch-plan topicBudget). */
  budget: number;
  resolve: () => void;
  reject: (err: Error) => void;
}


/**
 * A producer that executes the topic registry: it computes each message's key with its topic's
 * `key`, validates it against the topic's schema before it leaves the process, refuses topics
 * its app does not produce, and cuts publishes into requests within each topic's
 * `maxMessageBytes`. Concurrent publishes share a request (linger); each publish resolves only
 * when the broker acknowledged all of it (acks=all). A message failing its schema, too large for
 * its topic or to a topic of another app is rejected with a NonRetryableError and never sent.
 */
export class TopicProducer {
  private readonly producer: Producer;
  private readonly opts: Required<Omit<TopicProducerOptions, 'kafka' | 'contracts' | 'logger' | 'registry' | 'downProbeMs' | 'app' | 'clock'>>;
  private queue: Pending[] = [];
  private queuedBytes = new Map<string, number>();
  private queuedMessages = 0;
  /** `maxMessageBytes` by logical name, the dead-letter topics included (they take the source's configs). */
  private readonly limits = new Map<string, number>();
  private timer?: { cancel(): void };
  private inFlight = new Set<Promise<void>>();
  /** Publishes not yet acknowledged whole (their later parts may not be queued yet). */
  private readonly publishing = new Set<Promise<void>>();
  private connected = false;
  private lastError?: string;
  private readonly link: BrokerLink;
  private readonly probe: ReturnType<typeof metadataProbe>;
  private readonly published: Counter<'topic'>;
  private readonly failed: Counter<'topic' | 'reason'>;
  private readonly latency: Histogram<'topic'>;
  private readonly clock: Clock;

  constructor(private readonly deps: TopicProducerOptions) {
    this.clock = deps.clock ?? systemClock;
    this.opts = {
      topicPrefix: deps.topicPrefix ?? '',
      lingerMs: deps.lingerMs ?? 2,
      maxBatchMessages: deps.maxBatchMessages ?? 1000,
      publishTimeoutMs: deps.publishTimeoutMs ?? 10_000,
    };
    for (const spec of Object.values(TOPICS) as TopicSpec[]) {
      this.limits.set(spec.name, spec.maxMessageBytes);
      this.limits.set(dlqName(spec.name), spec.maxMessageBytes);
    }
    this.producer = deps.kafka.producer({
      allowAutoTopicCreation: false,
      // murmur2 on the key, as the Java client: a key lands on the same partition from any client
      // (kafkajs' DefaultPartitioner's choice, without its 64-bit arithmetic's garbage).
      createPartitioner: Murmur2Partitioner,
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
      clock: this.clock,
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

  /** Keys, encodes and validates; throws NonRetryableError for a message that breaks its contract. */
  encode<T>(spec: TopicSpec<T>, msg: OutgoingMessage<T>, opts: PublishOptions = {}): Message {
    if (spec.encoding === 'raw') {
      if (!Buffer.isBuffer(msg.value)) throw new NonRetryableError(`${spec.name}: raw topics take a Buffer`, 'PRODUCE_BAD_VALUE');
      const check = this.deps.contracts.validate(spec.schema, msg.headers ?? {});
      if (!check.ok) throw new NonRetryableError(`${spec.name} headers: ${check.errors}`, 'PRODUCE_SCHEMA_INVALID');
      return { key: spec.key(msg), value: msg.value, headers: msg.headers };
    }
    // One check of a stored record per message: with recordChecked, its own schema was checked
    // before it was stored, and the published record is the stored one, so the envelope is what
    // is left to check here (consumers still check every whole message they read).
    const validate =
      opts.recordChecked && spec.storedRecord ? this.deps.contracts.envelopeValidator(spec.schema, spec.storedRecord) : this.deps.contracts.validator(spec.schema);
    if (!validate(msg.value)) throw new NonRetryableError(`${spec.name}: ${formatErrors(validate.errors)}`, 'PRODUCE_SCHEMA_INVALID');
    return { key: spec.key(msg), value: msg.json ?? JSON.stringify(msg.value), headers: msg.headers };
  }

  /**
   * Publishes to a registry topic; resolves once the broker has acknowledged every message. A
   * call above the topic's limit travels as several requests (resolving when all are acked); a
   * message that alone exceeds the limit fails the whole call (NonRetryableError
   * PRODUCE_TOO_LARGE) before anything is sent.
   */
  async publish<T>(spec: TopicSpec<T>, messages: OutgoingMessage<T>[], opts: PublishOptions = {}): Promise<void> {
    await this.publishChecked(spec, messages, false, opts);
  }

  /**
   * As publish, but a message that alone exceeds the topic's limit is left out instead of
   * failing the call: the others are published and the left-out ones returned, for callers that
   * keep such a message elsewhere (chain-parser: the row stays stored and queryable).
   */
  publishSkippingTooLarge<T>(spec: TopicSpec<T>, messages: OutgoingMessage<T>[], opts: PublishOptions = {}): Promise<TooLargeMessage<T>[]> {
    return this.publishChecked(spec, messages, true, opts);
  }

  private publishChecked<T>(spec: TopicSpec<T>, messages: OutgoingMessage<T>[], skipTooLarge: boolean, opts: PublishOptions): Promise<TooLargeMessage<T>[]> {
    const notOwner = ownershipProblem(this.deps.app, spec);
    if (notOwner) {
      this.failed.inc({ topic: spec.name, reason: 'not_owner' }, messages.length);
      return Promise.reject(new NonRetryableError(notOwner, 'PRODUCE_NOT_OWNER'));
    }
    let encoded: Message[];
    try {
      encoded = messages.map((m) => this.encode(spec, m, opts));
    } catch (err) {
      this.failed.inc({ topic: spec.name, reason: 'schema' }, messages.length);
      return Promise.reject(err);
    }
    const sizes = encoded.map(recordBytes);
    const { parts, tooLarge } = splitIntoParts(sizes, topicBudget(spec.maxMessageBytes), this.opts.maxBatchMessages);
    const refused = tooLarge.map((i): TooLargeMessage<T> => ({ message: messages[i], key: String(encoded[i].key), bytes: sizes[i], limit: spec.maxMessageBytes }));
    if (refused.length && !skipTooLarge) {
      this.failed.inc({ topic: spec.name, reason: 'too_large' }, messages.length);
      return Promise.reject(tooLargeError(spec.name, refused[0], refused.length));
    }
    if (refused.length) this.failed.inc({ topic: spec.name, reason: 'too_large' }, refused.length);
    return this.send(topicName(spec, this.opts.topicPrefix), encoded, sizes, parts, spec.maxMessageBytes, spec.name).then(() => refused);
  }

  /**
   * Publishes already-encoded messages to a physical topic (dead letters, replays); no ownership
   * check (an app dead-letters the topics it consumes). `metricTopic` is the logical name, which
   * also gives the topic's limit.
   */
  publishEncoded(topic: string, messages: Message[], metricTopic = topic): Promise<void> {
    const limit = this.limits.get(metricTopic) ?? DEFAULT_MAX_MESSAGE_BYTES;
    const sizes = messages.map(recordBytes);
    const { parts, tooLarge } = splitIntoParts(sizes, topicBudget(limit), this.opts.maxBatchMessages);
    if (tooLarge.length) {
      this.failed.inc({ topic: metricTopic, reason: 'too_large' }, messages.length);
      const first = tooLarge[0];
      return Promise.reject(tooLargeError(metricTopic, { key: String(messages[first].key ?? ''), bytes: sizes[first], limit }, tooLarge.length));
    }
    return this.send(topic, messages, sizes, parts, limit, metricTopic);
  }

  /** Queues the parts of one publish (indices into `messages`); resolves when every part is acknowledged. */
  private send(topic: string, messages: Message[], sizes: number[], parts: number[][], limit: number, metricTopic: string): Promise<void> {
    const count = parts.reduce((n, part) => n + part.length, 0);
    if (count === 0) return Promise.resolve();
    const end = this.latency.startTimer({ topic: metricTopic });
    const budget = topicBudget(limit);
    let timedOut = false;
    const sendPart = (part: number[]) =>
      new Promise<void>((resolve, reject) => {
        if (timedOut) return reject(new RetryableError(`publish to ${topic} timed out before all its parts were sent`, 'PRODUCE_TIMEOUT'));
        this.enqueue({ topic, messages: part.map((i) => messages[i]), bytes: part.reduce((n, i) => n + sizes[i], 0), budget, resolve, reject });
      });
    // The parts of one publish one after the other: a part is queued once the one before it is
    // acknowledged, so they reach each partition in order (requests in flight side by side may be
    // written in either order). A publish within its topic's limit is one part and shares its
    // request with concurrent publishes as before.
    const acked = parts.reduce<Promise<void>>((before, part) => before.then(() => sendPart(part)), Promise.resolve());
    this.publishing.add(acked);
    void acked.catch(() => undefined).finally(() => this.publishing.delete(acked));
    let timer: Timer | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = this.clock.setTimeout(
        () => {
          timedOut = true;
          reject(new RetryableError(`publish to ${topic} not acknowledged in ${this.opts.publishTimeoutMs} ms`, 'PRODUCE_TIMEOUT'));
        },
        this.opts.publishTimeoutMs,
      );
    });
    return Promise.race([acked, timeout]).then(
      () => {
        timer?.cancel();
        end();
        this.published.inc({ topic: metricTopic }, count);
      },
      (err: Error) => {
        timer?.cancel();
        if ((err as RetryableError).code === 'PRODUCE_TIMEOUT') this.link.failed(err);
        this.failed.inc({ topic: metricTopic, reason: err instanceof RetryableError ? 'timeout' : 'broker' }, count);
        throw err;
      },
    );
  }

  /** Adds a part to the next request, sending what is queued first when the part's topic would pass its limit. */
  private enqueue(p: Pending): void {
    const part = { topic: p.topic, bytes: p.bytes, messages: p.messages.length, budget: p.budget };
    if (needsNewRequest({ bytesByTopic: this.queuedBytes, messages: this.queuedMessages }, part, this.opts.maxBatchMessages)) this.flush();
    this.queue.push(p);
    this.queuedBytes.set(p.topic, (this.queuedBytes.get(p.topic) ?? 0) + p.bytes);
    this.queuedMessages += p.messages.length;
    if (requestFull({ bytesByTopic: this.queuedBytes, messages: this.queuedMessages }, part, this.opts.maxBatchMessages)) this.flush();
    else if (!this.timer) this.timer = this.lingerTimer(() => this.flush());
  }

  private lingerTimer(fire: () => void): { cancel(): void } {
    if (this.opts.lingerMs > 0) {
      const t = setTimeout(fire, this.opts.lingerMs);
      return { cancel: () => clearTimeout(t) };
    }
    const i = setImmediate(fire);
    return { cancel: () => clearImmediate(i) };
  }

  private flush(): void {
    if (this.timer) {
      this.timer.cancel();
      this.timer = undefined;
    }
    const batch = this.queue;
    if (!batch.length) return;
    this.queue = [];
    this.queuedBytes = new Map();
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
        await this.clock.sleep(Math.min(200 * 2 ** attempt, 2_000));
      }
    }
  }

  /** Sends what is queued and every part of the publishes under way, waits for them, then disconnects. */
  async disconnect(): Promise<void> {
    this.flush();
    // The later parts of a large publish are queued as the earlier ones are acknowledged.
    await Promise.allSettled([...this.publishing]);
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

function tooLargeError(topic: string, first: { key: string; bytes: number; limit: number }, count: number): NonRetryableError {
  return new NonRetryableError(`${topic}: ${count} message(s) above the topic's limit of ${first.limit} bytes (first: key ${first.key}, ${first.bytes} bytes)`, 'PRODUCE_TOO_LARGE');
}
