import { channelAdaptersConfig } from '@chainpipe/aggregator';
import { chainOriginConfig } from '@chainpipe/chains';
import { dbConfig } from '@chainpipe/db';
import { kafkaConfig } from '@chainpipe/kafka';
import { int, str } from '@chainpipe/runtime';

export const orderTrackerConfig = {
  ...kafkaConfig,
  ...dbConfig,
  ...channelAdaptersConfig,
  ...chainOriginConfig,
  ORDER_DEPOSIT_APP_ID: str({ default: 'aggregator-deposits', doc: 'internal application whose monitored addresses are the deposit addresses (the gateway registers them)' }),
  ORDER_TRACKER_GROUP: str({ default: 'order-tracker', doc: 'consumer group of tx.push.v1; copies share it' }),
  ORDER_TRACKER_SESSION_TIMEOUT_MS: int({ default: 30_000, min: 6_000, max: 300_000, doc: 'Kafka session timeout: how long a crashed copy holds its partitions' }),
  ORDER_TRACKER_INTERVAL_MS: int({ default: 2000, min: 50, doc: 'period of the sweep: expiry, channel status, settlement, event outbox' }),
  ORDER_TRACKER_BATCH: int({ default: 200, min: 1, max: 5000, doc: 'orders per sweep step, events per publish' }),
  ORDER_DEPOSIT_VERIFY_WINDOW_MS: int({ default: 600_000, min: 1000, doc: "how long a pushed deposit that the chain's node does not know is asked for again (each sweep) before it counts as never on the chain and moves nothing" }),
  ORDER_STATUS_TIMEOUT_MS: int({ default: 5000, min: 100, doc: 'one channel status call' }),
};
