import type {
  KafkaAddressesChangesV1,
  KafkaChainFetchedV1,
  KafkaChainTxV1,
  KafkaKlineCandlesV2,
  KafkaKlinePoolsV1,
  KafkaMarketTicksV1,
  KafkaOrdersEventsV1,
  KafkaPriceQuotesV1,
  KafkaTxPushV1,
} from './generated/types';

/** What a topic's key function reads: the message's value and, for raw topics, its headers. */
export interface KeyedMessage<T> {
  readonly value: T;
  readonly headers?: Readonly<Record<string, string>>;
}

/**
 * The topic registry: every Kafka topic of the system, named once. A spec carries the topic's
 * name (with its version: renaming a topic is a migration, never an edit), how its value is
 * encoded, the schema its value (json) or headers (raw) must satisfy, what it is keyed by, how
 * large one message may be and which apps produce it. Code publishes to and consumes from these
 * specs, never from bare strings, and the spec is executed, not only documented: the producer
 * computes every key with `key`, batches within `maxMessageBytes` and refuses an app not named
 * in `producers`; topic creation sets `max.message.bytes` from `maxMessageBytes`. `make up` and
 * the tests create topics from this list before any consumer subscribes.
 */
export interface TopicSpec<T = unknown> {
  readonly name: string;
  readonly encoding: 'json' | 'raw';
  /** Schema id under `schemas/`: of the value for json topics, of the headers for raw ones. */
  readonly schema: string;
  /** The Kafka key of a message: the one place it is computed (the producer calls it). */
  key(message: KeyedMessage<T>): string;
  /** What `key` returns, for people: the AsyncAPI document shows it. */
  readonly keyDoc: string;
  /**
   * Largest record batch the topic accepts (its `max.message.bytes`): one message, or all the
   * messages of one partition in one request. The producer splits publishes to stay within it.
   */
  readonly maxMessageBytes: number;
  /**
   * The property of the value holding a record that is checked against its own schema before
   * it is stored, and published as stored (chain.tx.v1: `tx`, a NormalizedTx that chain-parser
   * checks against common/normalized-tx before storing its block). A publish stating
   * `recordChecked` then checks only the envelope (the topic's schema with that property reduced
   * to an object): one check of the record per message instead of two. Publishes that do not
   * state it (a producer that stores records unchecked) get the whole schema.
   */
  readonly storedRecord?: string;
  /** The apps (runService names) allowed to publish to the topic. */
  readonly producers: readonly string[];
  readonly partitions: number;
  /**
   * Topic-level broker settings (production needs them too; see deploy/README.md), other than
   * `max.message.bytes`, which topic creation derives from `maxMessageBytes`.
   */
  readonly configs?: Readonly<Record<string, string>>;
  /** Phantom field carrying the value type; never set. */
  readonly __type?: T;
}

/*
 * Message types are generated from the topics' schemas (src/generated/types.ts, `npm run gen`);
 * these names are what producers and consumers import.
 */
export type ChainTxMessage = KafkaChainTxV1;
/** chain.fetched.v1: a transaction a chain origin answered, not stored yet. */
export type ChainFetchedMessage = KafkaChainFetchedV1;
export type AddressChangeMessage = KafkaAddressesChangesV1;
/** tx.push.v1: one stored transaction matched to one application. */
export type TxPushMessage = KafkaTxPushV1;
/** One upstream update of one candle of a registered pool. */
export type MarketTickMessage = KafkaMarketTicksV1;
/** kline.candles.v2: the candles of one pool that one aggregator call stored or rolled up. */
export type KlineCandlesMessage = KafkaKlineCandlesV2;
/**
 * One of those candles with its pool's identity and store time: the latest candle per pool and
 * interval in Redis, and what the gateway's hub pushes to WebSocket clients.
 */
export type KlineCandle = Omit<KlineCandlesMessage, 'candles'> & KlineCandlesMessage['candles'][number];
/** Pool activation notices and the ingester's ensure command. */
export type KlinePoolNotice = KafkaKlinePoolsV1;
export type PriceQuoteMessage = KafkaPriceQuotesV1;
/** One state change of an integrator order. */
export type OrderEventMessage = KafkaOrdersEventsV1;

function topic<T>(spec: Omit<TopicSpec<T>, '__type'>): TopicSpec<T> {
  return spec;
}

/**
 * The broker's default `max.message.bytes` (1 MiB), stated so that every topic names its limit;
 * also the limit the producer assumes for a physical topic outside the registry.
 */
export const DEFAULT_MAX_MESSAGE_BYTES = 1_048_576;

/** Kafka key of a transaction: every message about one transaction lands on one partition, in order. */
export function chainTxKey(tx: { chain_type: string; chain_id: number | string; tx_hash: string }): string {
  return `${tx.chain_type}:${tx.chain_id}:${tx.tx_hash}`;
}

/**
 * The pool key of the WebSocket protocol and the debug endpoints:
 * `<chain_type>:<chain_id>:<pool_address lowercase>:<token>`. Also the Kafka key of the pool's
 * ticks and candles, so one pool's updates stay in order on one partition.
 */
export function poolKey(p: { chain_type: string; chain_id: number; pool_address: string; token: string }): string {
  return `${p.chain_type}:${p.chain_id}:${p.pool_address.toLowerCase()}:${p.token}`;
}

/** The asset a quote prices: the key of its messages and of the writer's newest-quote maps. */
export function quoteKey(m: PriceQuoteMessage): string {
  return m.kind === 'crypto' ? `crypto:${m.external_id}` : `fiat:${m.base}`;
}

export const TOPICS = {
  chainRaw: topic<Buffer>({
    name: 'chain.raw.v1',
    encoding: 'raw',
    schema: 'kafka/chain.raw.v1.headers',
    key: (m) => m.headers?.network ?? '',
    keyDoc: 'network',
    // Raw blocks reach 16 MiB; the broker default (1 MiB) would refuse them.
    maxMessageBytes: 18_874_368,
    producers: ['chain-ingest'],
    partitions: 3,
    configs: { 'retention.ms': String(7 * 24 * 3600 * 1000) },
  }),
  chainTx: topic<ChainTxMessage>({
    name: 'chain.tx.v1',
    encoding: 'json',
    schema: 'kafka/chain.tx.v1',
    key: (m) => chainTxKey(m.value.tx),
    keyDoc: 'chain_type:chain_id:tx_hash',
    maxMessageBytes: 4_194_304,
    storedRecord: 'tx',
    // chain-parser alone: it publishes what it stores, from blocks and from origin look-ups.
    producers: ['chain-parser'],
    partitions: 3,
  }),
  chainFetched: topic<ChainFetchedMessage>({
    name: 'chain.fetched.v1',
    encoding: 'json',
    schema: 'kafka/chain.fetched.v1',
    key: (m) => chainTxKey(m.value.tx),
    keyDoc: 'chain_type:chain_id:tx_hash',
    maxMessageBytes: 4_194_304,
    // What a chain origin answered — tx-gateway's single-transaction look-up, pending-compensator's
    // re-checks of pending transactions — goes to chain-parser, which stores and publishes it like
    // a streamed delivery: one store-and-publish path, whatever brought the record.
    producers: ['tx-gateway', 'pending-compensator'],
    partitions: 3,
  }),
  addressesChanges: topic<AddressChangeMessage>({
    name: 'addresses.changes.v1',
    encoding: 'json',
    schema: 'kafka/addresses.changes.v1',
    key: (m) => m.value.app_id,
    keyDoc: 'app_id',
    maxMessageBytes: DEFAULT_MAX_MESSAGE_BYTES,
    // tx-gateway for the applications' own addresses; aggregator-gateway (when an order is
    // created) and order-tracker (a late repair) for the orders' deposit addresses.
    producers: ['tx-gateway', 'aggregator-gateway', 'order-tracker'],
    partitions: 1,
  }),
  txPush: topic<TxPushMessage>({
    name: 'tx.push.v1',
    encoding: 'json',
    schema: 'kafka/tx.push.v1',
    // Per application: its pushes stay in match order for WebSocket clients and the webhook queue.
    key: (m) => m.value.app_id,
    keyDoc: 'app_id',
    maxMessageBytes: 4_194_304,
    producers: ['tx-matcher'],
    partitions: 3,
  }),
  marketTicks: topic<MarketTickMessage>({
    name: 'market.ticks.v1',
    encoding: 'json',
    schema: 'kafka/market.ticks.v1',
    key: (m) => poolKey(m.value),
    keyDoc: 'pool key (chain_type:chain_id:pool_address:token)',
    maxMessageBytes: DEFAULT_MAX_MESSAGE_BYTES,
    producers: ['market-ingester'],
    partitions: 3,
    configs: { 'retention.ms': String(24 * 3600 * 1000) },
  }),
  klineCandles: topic<KlineCandlesMessage>({
    // v2: one record per pool and aggregator call carrying all of its candles (v1 had one record
    // per candle, about nine per tick; its consumers cannot read the new shape, hence a new name).
    name: 'kline.candles.v2',
    encoding: 'json',
    schema: 'kafka/kline.candles.v2',
    key: (m) => poolKey(m.value),
    keyDoc: 'pool key (chain_type:chain_id:pool_address:token)',
    maxMessageBytes: DEFAULT_MAX_MESSAGE_BYTES,
    producers: ['kline-aggregator'],
    partitions: 3,
    configs: { 'retention.ms': String(24 * 3600 * 1000) },
  }),
  klinePools: topic<KlinePoolNotice>({
    name: 'kline.pools.v1',
    encoding: 'json',
    schema: 'kafka/kline.pools.v1',
    key: (m) => (m.value.pool_id === null ? 'ensure' : String(m.value.pool_id)),
    keyDoc: 'pool id (`ensure` for ensure)',
    maxMessageBytes: DEFAULT_MAX_MESSAGE_BYTES,
    producers: ['market-gateway'],
    partitions: 1,
  }),
  ordersEvents: topic<OrderEventMessage>({
    name: 'orders.events.v1',
    encoding: 'json',
    schema: 'kafka/orders.events.v1',
    key: (m) => m.value.order_no,
    keyDoc: 'order_no',
    maxMessageBytes: DEFAULT_MAX_MESSAGE_BYTES,
    producers: ['order-tracker'],
    partitions: 3,
  }),
  priceQuotes: topic<PriceQuoteMessage>({
    name: 'price.quotes.v1',
    encoding: 'json',
    schema: 'kafka/price.quotes.v1',
    key: (m) => quoteKey(m.value),
    keyDoc: 'crypto:<external_id> | fiat:<base>',
    maxMessageBytes: DEFAULT_MAX_MESSAGE_BYTES,
    producers: ['price-ingester'],
    partitions: 3,
    // Only the newest quote of an asset matters downstream; history is kept in Postgres.
    configs: { 'retention.ms': String(24 * 3600 * 1000) },
  }),
} as const;

export type TopicKey = keyof typeof TOPICS;

/** Dead letters of a topic: same key, the original bytes, headers naming where and why it failed. */
export function dlqName(topicName: string): string {
  return `${topicName}.dlq`;
}
