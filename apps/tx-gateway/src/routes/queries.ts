import express, { type RequestHandler, type Response, type Router } from 'express';
import { Counter, Histogram, type Registry } from 'prom-client';
import { OriginError, jsonRpcCall, type NetworkInfo } from '@chainpipe/chains';
import { sendError, sendOk, validateBody } from '@chainpipe/http';
import { errorMessage } from '@chainpipe/runtime';
import { storeLooseTransactions } from '@chainpipe/tx-store';
import type { TxGatewayDeps } from '../deps';
import { toListRecord, toV2Record } from '@chainpipe/tx-records';
import { fetchFromOrigin, type OriginLookup } from '../queries/origin';
import { TxQueryRepository } from '../queries/repository';
import {
  isPlausibleTxHash,
  normalizeBatchGet,
  normalizeMultiChain,
  normalizeSearch,
  normalizeTransactionQuery,
  type Normalized,
  type TransactionQuery,
} from '../queries/request';

/** Success codes of the spec's envelopes: 1 for the list endpoints, 0 for the V2 single transaction. */
const LIST_OK = { code: 1, message: 'success' };
const V2_OK = { code: 0, message: 'success' };

function queryMetrics(registry: Registry) {
  return {
    originFetches: new Counter({
      name: 'chainpipe_tx_origin_fetch_total',
      help: 'Single-transaction fetches from a chain origin by network and outcome (found, not_found, timeout, failed)',
      labelNames: ['network', 'outcome'],
      registers: [registry],
    }),
    originDuration: new Histogram({
      name: 'chainpipe_tx_origin_fetch_duration_seconds',
      help: 'Time to fetch and parse one transaction from a chain origin',
      labelNames: ['network'],
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15],
      registers: [registry],
    }),
    originStoreFailures: new Counter({
      name: 'chainpipe_tx_origin_store_failures_total',
      help: 'Transactions fetched from an origin that could not be stored (the response still carried them)',
      labelNames: ['network'],
      registers: [registry],
    }),
  };
}

/**
 * The history queries of the address monitoring spec, under both path layouts:
 * - POST /tx/api/v1/transfers/search        (POST /api/v1/transfer)
 * - POST /tx/api/v1/transfers/multi-chain   (POST /api/v1/transfer/multiple)
 * - POST /tx/api/v1/transactions/batch-get  (POST /api/v1/transfer/details)
 * - GET  /tx/api/v1/transactions/:tx_hash   (GET /transaction/transaction/tx?tx_hash=…)
 * Lists answer `{code: 1, msg, data: [...]}`, the single transaction `{code: 0, msg, data}`;
 * errors `{code: <status>, msg, data: null}`. Histories are global: any valid key may read any
 * address's history (only pushes are per application).
 */
export function queriesRoutes(deps: TxGatewayDeps): Router {
  const router = express.Router();
  const repo = new TxQueryRepository(deps.db);
  const metrics = queryMetrics(deps.registry);
  const log = deps.logger.child({ component: 'queries' });

  /** Sends the 400 of a failed normalisation; true when it did. */
  const rejected = <T>(res: Response, n: Normalized<T>): n is { ok: false; error: string } => {
    if (n.ok) return false;
    sendError(res, 400, n.error);
    return true;
  };

  const search: RequestHandler[] = [
    validateBody(deps.contracts, 'http/tx/search'),
    async (req, res) => {
      const q = normalizeSearch(req.body);
      if (rejected(res, q)) return;
      const rows = await repo.history(q.value);
      sendOk(res, rows.map(toListRecord), LIST_OK);
    },
  ];

  const multiChain: RequestHandler[] = [
    validateBody(deps.contracts, 'http/tx/multi-chain'),
    async (req, res) => {
      const q = normalizeMultiChain(req.body);
      if (rejected(res, q)) return;
      const rows = await repo.history(q.value);
      sendOk(res, rows.map(toListRecord), LIST_OK);
    },
  ];

  const batchGet: RequestHandler[] = [
    validateBody(deps.contracts, 'http/tx/batch-get'),
    async (req, res) => {
      const q = normalizeBatchGet(req.body);
      if (rejected(res, q)) return;
      const rows = await repo.byHashes(q.value.network, q.value.hashes);
      sendOk(res, rows.map(toListRecord), LIST_OK);
    },
  ];

  const originFetch = async (network: NetworkInfo, txHash: string): Promise<OriginLookup> => {
    const url = deps.origins.urlFor(network.network);
    if (!url) throw new OriginError(`no chain origin configured for ${network.network}`, 'unreachable');
    const end = metrics.originDuration.startTimer({ network: network.network });
    try {
      const lookup = await fetchFromOrigin(network, txHash, (method, params, timeoutMs) => jsonRpcCall(url, method, params, timeoutMs), deps.rpcTimeoutMs, deps.now);
      metrics.originFetches.inc({ network: network.network, outcome: lookup.found ? 'found' : 'not_found' });
      return lookup;
    } catch (err) {
      const outcome = err instanceof OriginError && err.kind === 'timeout' ? 'timeout' : 'failed';
      metrics.originFetches.inc({ network: network.network, outcome });
      log.warn({ msg: 'origin_fetch_failed', network: network.network, txHash, kind: (err as OriginError).kind, err: errorMessage(err) });
      throw err;
    } finally {
      end();
    }
  };

  /** Stored record unless `no_cache`; else the origin's, stored on the way (best effort). */
  const transaction = async (q: TransactionQuery, res: Response): Promise<void> => {
    const { network, txHash } = q;
    if (!isPlausibleTxHash(network.family, txHash)) return sendOk(res, null, V2_OK);
    if (!q.noCache) {
      const stored = await repo.byHash(network, txHash);
      if (stored) return sendOk(res, toV2Record(stored.record, stored.is_reorg_resend), V2_OK);
    }
    let lookup: OriginLookup;
    try {
      lookup = await originFetch(network, txHash);
    } catch (err) {
      if (!(err instanceof OriginError)) throw err;
      if (err.kind === 'timeout') return sendError(res, 504, `chain origin of ${network.network} did not answer in time`);
      return sendError(res, 502, `chain origin of ${network.network} failed: ${err.message}`);
    }
    if (!lookup.found) return sendOk(res, null, V2_OK);
    let tx = lookup.tx;
    let isReorgResend = false;
    try {
      const [stored] = await storeLooseTransactions(deps.db, network, [tx]);
      if (stored) {
        tx = stored.tx;
        isReorgResend = stored.is_reorg_resend;
      }
    } catch (err) {
      // The caller still gets the chain's answer; the next request simply fetches again.
      metrics.originStoreFailures.inc({ network: network.network });
      log.warn({ msg: 'origin_tx_store_failed', network: network.network, txHash, err: errorMessage(err) });
    }
    sendOk(res, toV2Record(tx, isReorgResend), V2_OK);
  };

  const single = (hashFrom: 'path' | 'query'): RequestHandler[] => [
    async (req, res) => {
      const params: Record<string, unknown> = { ...(req.query as Record<string, unknown>) };
      if (hashFrom === 'path') params.tx_hash = req.params.tx_hash;
      const valid = deps.contracts.validate('http/tx/queries-transaction', params);
      if (!valid.ok) return sendError(res, 400, valid.errors);
      const q = normalizeTransactionQuery(params);
      if (rejected(res, q)) return;
      await transaction(q.value, res);
    },
  ];

  router.post('/tx/api/v1/transfers/search', ...search);
  router.post('/api/v1/transfer', ...search);
  router.post('/tx/api/v1/transfers/multi-chain', ...multiChain);
  router.post('/api/v1/transfer/multiple', ...multiChain);
  router.post('/tx/api/v1/transactions/batch-get', ...batchGet);
  router.post('/api/v1/transfer/details', ...batchGet);
  router.get('/tx/api/v1/transactions/:tx_hash', ...single('path'));
  router.get('/transaction/transaction/tx', ...single('query'));
  return router;
}
