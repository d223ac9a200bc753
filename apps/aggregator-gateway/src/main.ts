import { channelAdapters } from '@chainpipe/aggregator';
import { loadContracts } from '@chainpipe/contracts';
import { addPostgres } from '@chainpipe/db';
import { addHttpServer } from '@chainpipe/http';
import { addKafka } from '@chainpipe/kafka';
import { addRedis } from '@chainpipe/redis';
import { runService } from '@chainpipe/runtime';
import { createAggregatorGatewayApp } from './app';
import { aggregatorGatewayConfig } from './config';
import { ordersModule } from './orders/module';
import { orderChannelsFrom } from './orders/channels';

runService('aggregator-gateway', aggregatorGatewayConfig, async (svc) => {
  const { config, logger, registry } = svc;
  const db = addPostgres(svc, { statementTimeoutMs: config.REQUEST_TIMEOUT_MS });
  const redis = addRedis(svc);
  const contracts = loadContracts();
  const producer = await addKafka(svc, { contracts }).producer();
  const orders = ordersModule({
    db,
    redis,
    producer,
    contracts,
    channels: orderChannelsFrom(db, channelAdapters(config)),
    config,
    logger,
    registry,
    now: () => new Date(),
    bodyLimitBytes: config.BODY_LIMIT_BYTES,
  });
  addHttpServer(svc, createAggregatorGatewayApp({ logger, registry, timeoutMs: config.REQUEST_TIMEOUT_MS, modules: [orders] }));
});
