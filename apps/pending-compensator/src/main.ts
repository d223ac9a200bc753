import { chainOriginsFromConfig } from '@chainpipe/chains';
import { jsonRpcCall, OriginError } from '@chainpipe/upstreams';
import { TOPICS } from '@chainpipe/contracts';
import { addPostgres } from '@chainpipe/db';
import { addKafka } from '@chainpipe/kafka';
import { periodicJob, runService } from '@chainpipe/runtime';
import { fetchFromOrigin } from '@chainpipe/tx-parsers';
import { markChecked, pendingTransactions } from '@chainpipe/tx-store';
import { createCompensator } from './compensator';
import { pendingCompensatorConfig } from './config';

runService('pending-compensator', pendingCompensatorConfig, async (svc) => {
  const { config, logger, registry } = svc;
  const origins = chainOriginsFromConfig(config);
  const db = addPostgres(svc);
  const kafka = addKafka(svc);
  const producer = await kafka.producer();
  const pass = createCompensator({
    pending: () => pendingTransactions(db, { limit: config.PENDING_BATCH_SIZE, minAgeMs: config.PENDING_MIN_AGE_MS }),
    lookup: (network, txHash) => {
      const url = origins.urlFor(network.network);
      if (!url) return Promise.reject(new OriginError(`no chain origin configured for ${network.network}`, 'unreachable'));
      return fetchFromOrigin(network, txHash, (method, params, timeoutMs) => jsonRpcCall(url, method, params, timeoutMs), config.CHAIN_RPC_TIMEOUT_MS);
    },
    // chain-parser stores and publishes them; until it has, the rows stay pending and a later
    // pass hands them over again, which the parser's merge turns into nothing new.
    handOver: async (network, txs) => {
      const fetchedAt = Date.now();
      await producer.publish(TOPICS.chainFetched, txs.map((tx) => ({ value: { network: network.network, tx, fetched_at: fetchedAt } })));
    },
    markChecked: (ids) => markChecked(db, ids),
    concurrency: config.PENDING_CONCURRENCY,
    logger,
    registry,
  });
  svc.serve(periodicJob({ name: 'pending-checks', intervalMs: config.PENDING_CHECK_INTERVAL_MS, run: pass, logger, runAtStart: true }));
});
