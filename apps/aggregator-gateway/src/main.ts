import { channelAdapters } from '@chainpipe/aggregator';
import { depositAddressBookFrom } from '@chainpipe/custody';
import { loadContracts } from '@chainpipe/contracts';
import { addPostgres } from '@chainpipe/db';
import { RateLimits, addHttpServer } from '@chainpipe/http';
import { addKafka } from '@chainpipe/kafka';
import { addRedis } from '@chainpipe/redis';
import { runService } from '@chainpipe/runtime';
import { createAggregatorGatewayApp } from './app';
import { aggregatorGatewayConfig } from './config';
import { ordersModule } from './orders/module';
import { orderChannelsFrom } from './orders/channels';
import { integratorKeyRate } from './orders/integrator-auth';
import { quotesModule } from './quotes/module';

runService('aggregator-gateway', aggregatorGatewayConfig, async (svc) => {
  const { config, logger, registry } = svc;
  const db = addPostgres(svc, { statementTimeoutMs: config.REQUEST_TIMEOUT_MS });
  const redis = addRedis(svc);
  const contracts = loadContracts();
  const producer = await addKafka(svc, { contracts }).producer();
  const adapters = channelAdapters(config);
  const limits = new RateLimits({ redis, registry, logger, trustedProxies: config.RATE_LIMIT_TRUSTED_PROXIES });
  const quotes = quotesModule({
    db,
    redis,
    contracts,
    adapters,
    logger,
    registry,
    bodyLimitBytes: config.BODY_LIMIT_BYTES,
    upstreamTimeoutMs: config.QUOTE_UPSTREAM_TIMEOUT_MS,
    heartbeatMs: config.QUOTE_HEARTBEAT_MS,
    streamLimit: limits.limit('quote_stream', { perClient: config.RATE_LIMIT_QUOTE_STREAM_PER_CLIENT }),
    keyRateOf: integratorKeyRate(db),
  });
  const orders = ordersModule({
    db,
    redis,
    producer,
    contracts,
    channels: orderChannelsFrom(db, adapters),
    depositAddresses: depositAddressBookFrom(config),
    config,
    logger,
    registry,
    bodyLimitBytes: config.BODY_LIMIT_BYTES,
    orderCreateLimit: limits.limit('order_create', { perClient: config.RATE_LIMIT_ORDER_CREATE_PER_CLIENT, perKey: config.RATE_LIMIT_ORDER_CREATE_PER_KEY }),
  });
  addHttpServer(svc, createAggregatorGatewayApp({ logger, registry, timeoutMs: config.REQUEST_TIMEOUT_MS, modules: [quotes, orders] }));
});
