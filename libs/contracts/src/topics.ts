import type {
  KafkaAddressesChangesV1,
  KafkaChainTxV1,
  KafkaKlineCandlesV1,
  KafkaKlinePoolsV1,
  KafkaMarketTicksV1,
  KafkaOrdersEventsV1,
  KafkaPriceQuotesV1,
  KafkaTxPushV1,
} from './generated/types';

/**
 * The topic registry: every Kafka topic of the system, named once. A spec carries the topic's
 * name (with its version: renaming a topic is a migration, never an edit), how its value is
 * encoded, the schema its value (json) or headers (raw) must satisfy, what it is keyed by and
 * who produces it. Code publishes to and consumes from these specs, never from bare strings;
 * `make up` and the tests create topics from this list before any consumer subscribes.
 */
export interface TopicSpec<T = unknown> {
  readonly name: string;
  readonly encoding: 'json' | 'raw';
  /** Schema id under `schemas/`: of the value for json topics, of the headers for raw ones. */
  readonly schema: string;
  readonly key: string;
  readonly producers: readonly string[];
  readonly partitions: number;
  /** Topic-level broker settings (production needs them too; see deploy/README.md). */
  readonly configs?: Readonly<Record<string, string>>;
  /** Phantom field carrying the value type; never set. */
  readonly __type?: T;
}

/*
 * Message types are generated from the topics' schemas (src/generated/types.ts, `npm run gen`);
 * these names are what producers and consumers import.
 */
export type ChainTxMessage = KafkaChainTxV1;
export type AddressChangeMessage = KafkaAddressesChangesV1;
/** tx.push.v1: one stored transaction matched to one application. */
export type TxPushMessage = KafkaTxPushV1;
/** One upstream update of one candle of a registered pool. */
export type MarketTickMessage = KafkaMarketTicksV1;
/** A stored (or rolled-up) candle. */
export type KlineCandleMessage = KafkaKlineCandlesV1;
/** Pool activation notices and the ingester's ensure command. */
export type KlinePoolNotice = KafkaKlinePoolsV1;
export type PriceQuoteMessage = KafkaPriceQuotesV1;
/** One state change of an integrator order. */
export type OrderEventMessage = KafkaOrdersEventsV1;

function topic<T>(spec: Omit<TopicSpec<T>, '__type'>): TopicSpec<T> {
  return spec;
}

/** Raw blocks reach 16 MiB; the broker default (1 MiB) would refuse them. */
const LARGE_MESSAGES = { 'max.message.bytes': '18874368' } as const;

export const TOPICS = {
  chainRaw: topic<Buffer>({
    name: 'chain.raw.v1',
    encoding: 'raw',
    schema: 'kafka/chain.raw.v1.headers',
    key: 'network',
    producers: ['chain-ingest'],
    partitions: 3,
    configs: { ...LARGE_MESSAGES, 'retention.ms': String(7 * 24 * 3600 * 1000) },
  }),
  chainTx: topic<ChainTxMessage>({
    name: 'chain.tx.v1',
    encoding: 'json',
    schema: 'kafka/chain.tx.v1',
    key: 'chain_type:chain_id:tx_hash',
    producers: ['chain-parser'],
    partitions: 3,
    configs: { 'max.message.bytes': '4194304' },
  }),
  addressesChanges: topic<AddressChangeMessage>({
    name: 'addresses.changes.v1',
    encoding: 'json',
    schema: 'kafka/addresses.changes.v1',
    key: 'app_id',
    producers: ['tx-gateway'],
    partitions: 1,
  }),
  txPush: topic<TxPushMessage>({
    name: 'tx.push.v1',
    encoding: 'json',
    schema: 'kafka/tx.push.v1',
    // Per application: its pushes stay in match order for WebSocket clients and the webhook queue.
    key: 'app_id',
    producers: ['tx-matcher', 'pending-compensator'],
    partitions: 3,
    configs: { 'max.message.bytes': '4194304' },
  }),
  marketTicks: topic<MarketTickMessage>({
    name: 'market.ticks.v1',
    encoding: 'json',
    schema: 'kafka/market.ticks.v1',
    key: 'pool key (chain_type:chain_id:pool_address:token)',
    producers: ['market-ingester'],
    partitions: 3,
    configs: { 'retention.ms': String(24 * 3600 * 1000) },
  }),
  klineCandles: topic<KlineCandleMessage>({
    name: 'kline.candles.v1',
    encoding: 'json',
    schema: 'kafka/kline.candles.v1',
    key: 'pool key (chain_type:chain_id:pool_address:token)',
    producers: ['kline-aggregator'],
    partitions: 3,
    configs: { 'retention.ms': String(24 * 3600 * 1000) },
  }),
  klinePools: topic<KlinePoolNotice>({
    name: 'kline.pools.v1',
    encoding: 'json',
    schema: 'kafka/kline.pools.v1',
    key: 'pool id (`ensure` for ensure)',
    producers: ['market-gateway'],
    partitions: 1,
  }),
  ordersEvents: topic<OrderEventMessage>({
    name: 'orders.events.v1',
    encoding: 'json',
    schema: 'kafka/orders.events.v1',
    key: 'order_no',
    producers: ['order-tracker'],
    partitions: 3,
  }),
  priceQuotes: topic<PriceQuoteMessage>({
    name: 'price.quotes.v1',
    encoding: 'json',
    schema: 'kafka/price.quotes.v1',
    key: 'crypto:<external_id> | fiat:<base>',
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
