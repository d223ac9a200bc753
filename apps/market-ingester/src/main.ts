import { TOPICS } from '@chainpipe/contracts';
import { addPostgres } from '@chainpipe/db';
import { addKafka } from '@chainpipe/kafka';
import { API_KEY_HEADER, REST_OHLCV_MAX_LIMIT, parseOhlcvList } from '@chainpipe/kline';
import { CandleRepository, DISCONNECTED_STATUS, IngesterStatusStore, PoolRepository } from '@chainpipe/kline-store';
import { addRedis } from '@chainpipe/redis';
import { errorMessage, periodicJob, runService, systemClock } from '@chainpipe/runtime';
import { upstreamJson, upstreamUrl } from '@chainpipe/upstreams';
import { marketIngesterConfig } from './config';
import { MarketIngester } from './ingester';
import { UpstreamSocket } from './upstream-socket';

runService('market-ingester', marketIngesterConfig, async (svc) => {
  const { config, logger, registry } = svc;
  const db = addPostgres(svc, { poolMax: 2 });
  const redis = addRedis(svc);
  const kafka = addKafka(svc);
  const producer = await kafka.producer();
  const pools = new PoolRepository(db);
  const statusStore = new IngesterStatusStore(redis);
  const candles = new CandleRepository(db);

  const ingester = new MarketIngester({
    activePools: () => pools.active(),
    publish: (messages) => producer.publish(TOPICS.marketTicks, messages),
    openSocket: (index, onUpdate, onGap) => {
      const socket = new UpstreamSocket({
        index,
        url: config.MARKET_WS_URL,
        apiKey: config.MARKET_API_KEY,
        pingMs: config.MARKET_PING_MS,
        reconnect: { initialMs: config.MARKET_RECONNECT_INITIAL_MS, maxMs: config.MARKET_RECONNECT_MAX_MS },
        onUpdate,
        onGap,
        logger,
      });
      socket.start();
      return socket;
    },
    interval: config.MARKET_UPSTREAM_INTERVAL,
    subscriptionsPerSocket: config.MARKET_SUBSCRIPTIONS_PER_SOCKET,
    logger,
    registry,
    clock: systemClock,
    maxPendingTicks: config.MARKET_MAX_PENDING_TICKS,
    backfill: {
      fetchMinutes: async (pool, beforeSec, limit) => {
        const path = `/onchain/networks/${encodeURIComponent(pool.network_id)}/pools/${encodeURIComponent(pool.pool_address)}/ohlcv/minute`;
        const query = { aggregate: '1', before_timestamp: String(beforeSec), limit: String(Math.min(limit, REST_OHLCV_MAX_LIMIT)), token: pool.token, currency: 'usd' };
        return parseOhlcvList(await upstreamJson({ url: upstreamUrl(config.KLINE_MARKET_API_URL, path), query, headers: { [API_KEY_HEADER]: config.MARKET_API_KEY, accept: 'application/json' }, timeoutMs: 10_000 }));
      },
      latestStoredMinutes: (poolIds) => candles.latestOpenTimes(poolIds, '1m'),
      settleMs: config.MARKET_BACKFILL_SETTLE_MS,
    },
    publishRetry: { initialMs: config.MARKET_RECONNECT_INITIAL_MS, maxMs: config.MARKET_RECONNECT_MAX_MS },
  });

  const writeStatus = () =>
    statusStore.write(ingester.status(), config.MARKET_STATUS_INTERVAL_MS * 5).catch((err) => logger.warn({ msg: 'status_write_failed', err: errorMessage(err) }));
  svc.serve({
    name: 'upstream',
    // Unready while the upstream is away or the backlog for the broker is full (updates being dropped).
    health: () => (ingester.status().connected && !ingester.backlogFull ? 'ok' : 'degraded'),
    start: async () => {
      await ingester.sync();
      return { upstream: config.MARKET_WS_URL.replace(/\?.*$/, '') };
    },
    stop: async () => {
      await ingester.stop();
      await statusStore.write(DISCONNECTED_STATUS, config.MARKET_STATUS_INTERVAL_MS * 5).catch(() => undefined);
    },
  });
  // Started after the first sync; stopped (a write under way finished) before the upstream
  // sockets close and the disconnected status is written. Neither run rejects: both log their own failures.
  svc.serve(periodicJob({ name: 'pool-resync', intervalMs: config.MARKET_POOLS_RESYNC_MS, run: () => ingester.sync(), logger }));
  svc.serve(periodicJob({ name: 'status-write', intervalMs: config.MARKET_STATUS_INTERVAL_MS, run: writeStatus, logger }));
  // Pool notices only say "look again": the table is re-read, so a lost or repeated notice is harmless.
  await kafka.consume(TOPICS.klinePools, {
    groupId: config.MARKET_INGESTER_GROUP,
    fromBeginning: false,
    handler: async (records) => {
      if (records.some((r) => r.value.action === 'ensure')) await ingester.ensure();
      else await ingester.sync();
    },
  });
});
