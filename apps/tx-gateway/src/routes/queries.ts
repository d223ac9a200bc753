import type { RequestHandler, Response } from 'express';
import { Counter, Histogram, type Registry } from 'prom-client';
import { isPlausibleTxHash, type NetworkInfo } from '@chainpipe/chains';
import { OriginError, jsonRpcCall } from '@chainpipe/upstreams';
import { requestParams, sendError, sendOk, type ApiRoutes, type HandlerFor } from '@chainpipe/http';
import { errorMessage } from '@chainpipe/runtime';
import { TOPICS } from '@chainpipe/contracts';
import { toListRecord, toV2Record } from '@chainpipe/tx-records';
import { EXAMPLE_ADDRESS, EXAMPLE_LIST, EXAMPLE_V2 } from '../api-examples';
import type { TxGatewayDeps } from '../deps';
import { fetchFromOrigin, type OriginLookup } from '@chainpipe/tx-parsers';
import { TxQueryRepository } from '../queries/repository';
import {
  normalizeBatchGet,
  normalizeMultiChain,
  normalizeSearch,
  normalizeTransactionQuery,
  type Normalized,
  type TransactionQuery,
} from '../queries/request';
import { declareOperation } from './layouts';

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
    originPublishFailures: new Counter({
      name: 'chainpipe_tx_origin_publish_failures_total',
      help: 'Transactions fetched from an origin that could not be handed to chain-parser on chain.fetched.v1 (the response still carried them)',
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
export function queriesRoutes(api: ApiRoutes, deps: TxGatewayDeps): void {
  const repo = new TxQueryRepository(deps.db);
  const metrics = queryMetrics(deps.registry);
  const log = deps.logger.child({ component: 'queries' });

  /** Sends the 400 of a failed normalisation; true when it did. */
  const rejected = <T>(res: Response, n: Normalized<T>): n is { ok: false; error: string } => {
    if (n.ok) return false;
    sendError(res, 400, n.error);
    return true;
  };

  const search: RequestHandler = async (req, res) => {
    const q = normalizeSearch(req.body);
    if (rejected(res, q)) return;
    const rows = await repo.history(q.value);
    sendOk(res, rows.map(toListRecord), LIST_OK);
  };

  const multiChain: RequestHandler = async (req, res) => {
    const q = normalizeMultiChain(req.body);
    if (rejected(res, q)) return;
    const rows = await repo.history(q.value);
    sendOk(res, rows.map(toListRecord), LIST_OK);
  };

  const batchGet: RequestHandler = async (req, res) => {
    const q = normalizeBatchGet(req.body);
    if (rejected(res, q)) return;
    const rows = await repo.byHashes(q.value.network, q.value.hashes);
    sendOk(res, rows.map(toListRecord), LIST_OK);
  };

  const originFetch = async (network: NetworkInfo, txHash: string): Promise<OriginLookup> => {
    const url = deps.origins.urlFor(network.network);
    if (!url) throw new OriginError(`no chain origin configured for ${network.network}`, 'unreachable');
    const end = metrics.originDuration.startTimer({ network: network.network });
    try {
      const lookup = await fetchFromOrigin(network, txHash, (method, params, timeoutMs) => jsonRpcCall(url, method, params, timeoutMs), deps.rpcTimeoutMs, deps.clock);
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

  /**
   * Stored record unless `no_cache`; else the origin's answer, handed to chain-parser on
   * chain.fetched.v1 before the response. The gateway writes nothing itself: chain-parser stores
   * the record through the stream's own path (merged into what is stored, `changed_by`, and
   * published to chain.tx.v1 when new or changed before its offset is committed), so a fetched
   * transaction is pushed like a streamed one and a later delivery of its block still publishes
   * what it adds. The publish is acknowledged by the broker (acks=all) before the answer, so
   * nothing the origin answered is lost after the response; when it fails the caller still gets
   * the chain's answer and the next request fetches again.
   */
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
      // The spec's codes and a fixed text: the failure's detail (a socket error names the node's
      // host and address) went to the log in originFetch, never to the caller (D174).
      if (err.kind === 'timeout') return sendError(res, 504, `chain origin of ${network.network} did not answer in time`);
      return sendError(res, 502, `chain origin of ${network.network} failed`);
    }
    if (!lookup.found) return sendOk(res, null, V2_OK);
    const tx = lookup.tx;
    try {
      await deps.producer.publish(TOPICS.chainFetched, [{ value: { network: network.network, tx, fetched_at: deps.clock.now() } }]);
    } catch (err) {
      metrics.originPublishFailures.inc({ network: network.network });
      log.warn({ msg: 'origin_tx_publish_failed', network: network.network, txHash, err: errorMessage(err) });
    }
    sendOk(res, toV2Record(tx, false), V2_OK);
  };

  const single: HandlerFor<{ params: 'http/tx/queries-transaction' }> = async (_req, res) => {
    const q = normalizeTransactionQuery(requestParams(res));
    if (rejected(res, q)) return;
    await transaction(q.value, res);
  };

  const tags = ['transaction queries'];
  const list = (data: string, description: string) => ({ ...LIST_OK, data, description, example: EXAMPLE_LIST });
  const searchSpec = {
    summary: 'Transfers of one address',
    description: 'Newest first. Without `chain_type` the search spans chains and every stored form of the address; `token` keeps transactions in which the address itself moved that token. Page with `id`: pass the `id` of the last record; fewer than `limit` records means the end.',
    tags,
    auth: 'apiKey',
    request: { body: 'http/tx/search', bodyExample: { address: EXAMPLE_ADDRESS, chain_type: 'ethereum', chain_id: 1, limit: 20 } },
    ok: list('http/tx/transfer-list', 'list-format records'),
  } as const;
  const multiChainSpec = {
    summary: 'Transfers of several addresses on several chains, as one list',
    description: 'One merged list, newest first, each transaction once; paged like search.',
    tags,
    auth: 'apiKey',
    request: { body: 'http/tx/multi-chain', bodyExample: { addresses: [{ chain_type: 'ethereum', chain_id: 1, address: [EXAMPLE_ADDRESS] }], limit: 20 } },
    ok: list('http/tx/transfer-list', 'list-format records'),
  } as const;
  const batchGetSpec = {
    summary: 'Stored transactions by hash',
    description: 'Up to 100 hashes, answered in request order; unknown hashes are skipped and the chain origin is never asked.',
    tags,
    auth: 'apiKey',
    request: { body: 'http/tx/batch-get', bodyExample: { chain_type: 'ethereum', chain_id: 1, tx_hash: [EXAMPLE_LIST[0].tx_hash] } },
    ok: list('http/tx/transfer-list', 'list-format records, in request order'),
  } as const;
  const singleSpec = {
    summary: 'One transaction in the V2 format',
    description: 'The stored record; when none is stored (or with `no_cache=true|1`) the chain origin is asked and its answer is returned, then stored and pushed to monitoring applications like a streamed transaction. `data` is null when the chain does not know the hash.',
    tags,
    auth: 'apiKey',
    request: { params: 'http/tx/queries-transaction' },
    ok: { ...V2_OK, data: { anyOf: [{ $ref: 'common/tx-v2-record' }, { type: 'null' }] }, description: 'the V2 record, or null', example: EXAMPLE_V2 },
    errors: { 502: 'the chain origin failed', 504: 'the chain origin did not answer in time, or the request ran past 15 s' },
  } as const;
  declareOperation(api, { method: 'post', path: '/tx/api/v1/transfers/search', ...searchSpec }, search, { path: '/api/v1/transfer' });
  declareOperation(api, { method: 'post', path: '/tx/api/v1/transfers/multi-chain', ...multiChainSpec }, multiChain, { path: '/api/v1/transfer/multiple' });
  declareOperation(api, { method: 'post', path: '/tx/api/v1/transactions/batch-get', ...batchGetSpec }, batchGet, { path: '/api/v1/transfer/details' });
  declareOperation(api, { method: 'get', path: '/tx/api/v1/transactions/:tx_hash', ...singleSpec }, single, { path: '/transaction/transaction/tx', note: 'tx_hash in the query' });
}
