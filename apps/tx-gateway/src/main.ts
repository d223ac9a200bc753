import { chainOriginsFromConfig, networkByChain } from '@chainpipe/chains';
import { TOPICS } from '@chainpipe/contracts';
import { ApiKeyRepository, addPostgres } from '@chainpipe/db';
import { RateLimits, addHttpServer, createKeyResolver } from '@chainpipe/http';
import { addKafka } from '@chainpipe/kafka';
import { ConnectionCap, addRedis } from '@chainpipe/redis';
import { SecretBox, periodicJob, runService, systemClock } from '@chainpipe/runtime';
import { toV2Record } from '@chainpipe/tx-records';
import { AppConfigRepository, PoolTrades, TxQueryRepository } from '@chainpipe/tx-store';
import { createTxGatewayApp } from './app';
import { txGatewayConfig } from './config';
import { txGatewayModules } from './modules';
import { FanoutReader } from './push/fanout';
import { createPushHandler } from './push/push.handler';
import { ResendStore, resendIntervals } from './push/resend-store';
import { WsHub } from './push/ws-hub';
import { rpcProxyOrigins } from './management/rpc-proxy';
import { SENDER_DEFAULTS, createWebhookDispatcher } from '@chainpipe/webhooks';

runService('tx-gateway', txGatewayConfig, async (svc) => {
  const { config, logger, registry } = svc;
  const origins = chainOriginsFromConfig(config);
  const db = addPostgres(svc, { statementTimeoutMs: config.REQUEST_TIMEOUT_MS });
  const redis = addRedis(svc);
  const kafka = addKafka(svc);
  const keys = new ApiKeyRepository(db);
  const resolveKey = createKeyResolver((keyId) => keys.findKey(keyId));
  const secretBox = new SecretBox(config.WEBHOOK_SECRET_KEY);
  // The manual retry delivers like webhook-dispatcher does, under the same per-application lock.
  const webhooks = createWebhookDispatcher({
    db,
    secretBox,
    sender: { allowPrivate: config.ALLOW_PRIVATE_WEBHOOK_TARGETS, ...SENDER_DEFAULTS, extraCa: config.WEBHOOK_CA_FILE?.pem },
    logger,
    registry,
    // A few batches within the request; the rest is the scheduler's.
    maxBatchesPerDrain: 3,
  });
  // The manual retry answers by half the request deadline, whatever a receiver does.
  const retryDeadlineMs = Math.floor(config.REQUEST_TIMEOUT_MS / 2);
  const modules = txGatewayModules({
    db,
    contracts: kafka.contracts,
    producer: await kafka.producer(),
    logger,
    registry,
    resolveKey,
    origins,
    rpcTimeoutMs: config.CHAIN_RPC_TIMEOUT_MS,
    rpcProxy: { origins: rpcProxyOrigins(config.RPC_PROXY_URLS, origins), maxAnswerBytes: config.RPC_PROXY_MAX_ANSWER_BYTES },
    rpcProxyLimit: new RateLimits({ redis, registry, logger, trustedProxies: config.RATE_LIMIT_TRUSTED_PROXIES }).limit('rpc_proxy', { perKey: config.RATE_LIMIT_RPC_PROXY_PER_KEY, perClient: config.RATE_LIMIT_RPC_PROXY_PER_CLIENT }),
    secretBox,
    retryWebhooks: (appId) => webhooks.drainApp(appId, { force: true, deadlineMs: retryDeadlineMs }),
    poolTrades: new PoolTrades(redis),
    allowPrivateWebhookTargets: config.ALLOW_PRIVATE_WEBHOOK_TARGETS,
    clock: systemClock,
    bodyLimitBytes: config.BODY_LIMIT_BYTES,
  });
  const http = addHttpServer(svc, createTxGatewayApp({ logger, registry, timeoutMs: config.REQUEST_TIMEOUT_MS, modules }));

  if (!config.WS_PUSH_ENABLED) return;
  // WebSocket push: one shared tx.push.v1 group stores every push in Redis and announces it on
  // the fan-out stream; every copy writes what the stream announces to its own connections.
  const txs = new TxQueryRepository(db);
  const store = new ResendStore(redis, { retentionSeconds: config.WS_RESEND_RETENTION_SECONDS, fanoutMaxEntries: config.WS_FANOUT_MAX_ENTRIES });
  const hub = new WsHub(
    {
      resolveKey,
      store,
      cap: new ConnectionCap(redis, { maxPerKey: config.WS_MAX_CONNECTIONS_PER_KEY, leaseMs: config.WS_CONNECTION_LEASE_MS }, systemClock),
      resendIntervalSeconds: resendIntervals(new AppConfigRepository(db), systemClock, config.WS_RESEND_CONFIG_CACHE_MS),
      lookupTx: async (chainType, chainId, hash) => {
        const network = networkByChain(chainType, chainId);
        const row = network ? await txs.byHash(network, hash) : undefined;
        return row ? toV2Record(row.record, row.is_reorg_resend) : undefined;
      },
      logger,
      registry,
    },
    {
      maxConnectionsPerKey: config.WS_MAX_CONNECTIONS_PER_KEY,
      maxBufferedBytes: config.WS_MAX_BUFFERED_BYTES,
      pingIntervalMs: config.WS_PING_INTERVAL_MS,
      defaultResendSeconds: config.WS_RESEND_DEFAULT_SECONDS,
      retentionSeconds: config.WS_RESEND_RETENTION_SECONDS,
      maxMessageBytes: config.WS_MAX_MESSAGE_BYTES,
    },
  );
  http.upgrade(hub.upgrade);
  // Unacknowledged pushes due again (the applications' ws_ack_resend_interval_seconds).
  svc.serve(periodicJob({ name: 'ws_periodic_resend', intervalMs: config.WS_RESEND_SCAN_MS, run: () => hub.resendDue(), logger }));
  // The per-key cap's leases of this copy's connections, renewed well before they run out.
  svc.serve(periodicJob({ name: 'ws_cap_renew', intervalMs: Math.floor(config.WS_CONNECTION_LEASE_MS / 3), run: () => hub.renewLeases(), logger }));
  const fanout = new FanoutReader({
    redis: redis.duplicate(),
    deliver: (p) => hub.deliver(p.appId, p.frame, p.chainType, p.listenAddress, p.messageId),
    // Entries missed (this copy fell past the cap, or Redis lost the stream): never a silent gap.
    onGap: () => hub.recoverGap(),
    logger,
  });
  svc.serve({ name: 'ws-fanout', health: () => fanout.health(), start: () => fanout.start(), stop: () => fanout.stop() });
  await kafka.consume(TOPICS.txPush, {
    groupId: config.TX_GATEWAY_PUSH_GROUP,
    handler: createPushHandler({ store, retentionSeconds: config.WS_RESEND_RETENTION_SECONDS, clock: systemClock }),
    // A new group starts at the oldest push kept: the handler skips what is past the retention.
    fromBeginning: true,
    sessionTimeoutMs: config.TX_GATEWAY_SESSION_TIMEOUT_MS,
  });
  // Registered last, so stopped first: clients get 1001 and reconnect to another copy at once,
  // not after this copy's consumer has finished its batch and left its group (seconds under load).
  svc.serve({ name: 'websocket', stop: () => hub.close() });
});
