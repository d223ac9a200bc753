import { Gauge } from 'prom-client';
import { TOPICS } from '@chainpipe/contracts';
import { addPostgres } from '@chainpipe/db';
import { addKafka, processGroupId } from '@chainpipe/kafka';
import { addRedis } from '@chainpipe/redis';
import { toTransactionResult } from '@chainpipe/tx-records';
import { AppConfigRepository, DexPoolRepository, MonitoredAddressRepository, PoolTrades } from '@chainpipe/tx-store';
import { periodicJob, runService, sleep, systemClock } from '@chainpipe/runtime';
import { createChainTxHandler } from './chain-tx.handler';
import { txMatcherConfig } from './config';
import { IndexSync } from './index-sync';
import { poolKey } from './plan';

runService('tx-matcher', txMatcherConfig, async (svc) => {
  const { config, logger, registry } = svc;
  const db = addPostgres(svc);
  const monitored = new MonitoredAddressRepository(db);
  const appConfigs = new AppConfigRepository(db);
  const dexPools = new DexPoolRepository(db);
  const loadPools = async () => new Set((await dexPools.all()).map((p) => poolKey(p.chainType, p.chainId, p.pool)));
  // One publish per consumer call, awaited before the commit: a linger would only add latency.
  const kafka = addKafka(svc, { producer: { lingerMs: 0 } });
  const producer = await kafka.producer();
  const trades = new PoolTrades(addRedis(svc));
  let pools: ReadonlySet<string> = new Set();

  const sync = new IndexSync();
  const indexSize = new Gauge({ name: 'chainpipe_matcher_index_addresses', help: 'Monitored (application, address) pairs in the index', registers: [registry] });
  const lastResync = new Gauge({ name: 'chainpipe_matcher_last_resync_seconds', help: 'Duration of the last full reload of tx.monitored_addresses', registers: [registry] });
  const reload = async () => {
    const t0 = Date.now();
    const rows = await sync.reload((onPage) => monitored.scanAll(config.TX_MATCHER_SCAN_PAGE_SIZE, onPage));
    pools = await loadPools();
    indexSize.set(sync.index.size);
    lastResync.set((Date.now() - t0) / 1000);
    logger.info({ msg: 'index_loaded', rows, ms: Date.now() - t0 });
  };

  // Entry points start in this order. Every copy needs every change notice: a group of its own,
  // reading from the latest offset; it joins before the first load, so a change is either in
  // the table scan or in the stream. Transactions are matched only once the index is loaded. The
  // group is deleted on a clean stop (the next start loads the table again anyway).
  const changes = await kafka.consume(TOPICS.addressesChanges, {
    groupId: processGroupId(config.TX_MATCHER_CHANGES_GROUP_PREFIX),
    fromBeginning: false,
    removeGroupOnStop: true,
    handler: async (records) => {
      for (const r of records) sync.applyChange(r.value);
      indexSize.set(sync.index.size);
    },
  });
  svc.serve({
    name: 'address-index',
    ready: () => sync.isLoaded,
    start: async () => {
      const deadline = Date.now() + 60_000;
      while (!changes.ready()) {
        if (Date.now() > deadline) throw new Error('address changes consumer did not join its group in 60 s');
        await sleep(50);
      }
      await reload();
      return { addresses: sync.index.size };
    },
  });
  // Started once the index is loaded (entry points start in order), so the first pass of each
  // comes one interval after the load.
  svc.serve(periodicJob({ name: 'resync', intervalMs: config.TX_MATCHER_RESYNC_INTERVAL_MS, run: reload, logger }));
  // Pools are few: their table is re-read often instead of carrying change notices.
  svc.serve(
    periodicJob({
      name: 'pool-reload',
      intervalMs: config.TX_MATCHER_POOL_RELOAD_INTERVAL_MS,
      run: async () => {
        pools = await loadPools();
      },
      logger,
    }),
  );
  await kafka.consume(TOPICS.chainTx, {
    groupId: config.TX_MATCHER_GROUP,
    maxRecordsPerCall: config.TX_MATCHER_MAX_RECORDS_PER_CALL,
    partitionsConcurrently: config.TX_MATCHER_PARTITIONS_CONCURRENTLY,
    sessionTimeoutMs: config.TX_MATCHER_SESSION_TIMEOUT_MS,
    handler: createChainTxHandler({
      index: () => sync.index,
      switches: (appIds) => appConfigs.switches(appIds),
      publish: (messages) => producer.publish(TOPICS.txPush, messages),
      pools: () => pools,
      appendTrade: (pool, id, tx) => trades.append(tx.chain_type, tx.chain_id, pool, id, tx.tx_hash, toTransactionResult(tx)),
      clock: systemClock,
      logger,
      registry,
    }),
  });
});
