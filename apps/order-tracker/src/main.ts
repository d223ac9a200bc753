import { channelAdapters } from '@chainpipe/aggregator';
import { chainOriginsFromConfig } from '@chainpipe/chains';
import { TOPICS } from '@chainpipe/contracts';
import { ApiKeyRepository, addPostgres } from '@chainpipe/db';
import { addKafka } from '@chainpipe/kafka';
import { periodicJob, runService } from '@chainpipe/runtime';
import { originTxLookup } from '@chainpipe/custody';
import { channelStatusFromAdapters } from './channel-status';
import { orderTrackerConfig } from './config';
import { OrderTracker } from './tracker';

runService('order-tracker', orderTrackerConfig, async (svc) => {
  const { config, logger, registry } = svc;
  const db = addPostgres(svc);
  const kafka = addKafka(svc);
  const producer = await kafka.producer();
  // the internal application whose monitored addresses are the deposit addresses
  await new ApiKeyRepository(db).createApp(config.ORDER_DEPOSIT_APP_ID, 'Aggregator deposit addresses');
  // deposits are read from the chain's own node before they move an order (docs/decisions.md#d161)
  const origins = chainOriginsFromConfig(config);
  const tracker = new OrderTracker({
    db,
    producer,
    channels: channelStatusFromAdapters(channelAdapters(config)),
    logger,
    registry,
    depositAppId: config.ORDER_DEPOSIT_APP_ID,
    chainTx: originTxLookup(origins, config.CHAIN_RPC_TIMEOUT_MS),
    depositVerifyWindowMs: config.ORDER_DEPOSIT_VERIFY_WINDOW_MS,
    batchSize: config.ORDER_TRACKER_BATCH,
    statusTimeoutMs: config.ORDER_STATUS_TIMEOUT_MS,
  });

  await kafka.consume(TOPICS.txPush, {
    groupId: config.ORDER_TRACKER_GROUP,
    sessionTimeoutMs: config.ORDER_TRACKER_SESSION_TIMEOUT_MS,
    handler: (records) => tracker.handlePushes(records.map((r) => r.value)),
  });

  // The sweep: one pass at a time, the first at start; a failed pass is logged and the next one retries.
  svc.serve(periodicJob({ name: 'sweep', intervalMs: config.ORDER_TRACKER_INTERVAL_MS, run: () => tracker.sweep(), logger, runAtStart: true }));
});
