import type { RequestHandler, Response } from 'express';
import { requestParams, sendError, sendOk, type ApiRoutes, type HandlerFor } from '@chainpipe/http';
import { toListRecord } from '@chainpipe/tx-records';
import { EXAMPLE_ADDRESS, EXAMPLE_LIST, EXAMPLE_V2 } from '../api-examples';
import {
  normalizeBatchGet,
  normalizeMultiChain,
  normalizeSearch,
  normalizeTransactionQuery,
  type Normalized,
  type TransactionQuery,
} from '../queries/request';
import type { QueryUseCases } from '../use-cases/queries';
import { declareOperation } from './layouts';

/** Success codes of the spec's envelopes: 1 for the list endpoints, 0 for the V2 single transaction. */
const LIST_OK = { code: 1, message: 'success' };
const V2_OK = { code: 0, message: 'success' };

/**
 * The history queries of the address monitoring spec, under both path layouts, over the query
 * use-cases:
 * - POST /tx/api/v1/transfers/search        (POST /api/v1/transfer)
 * - POST /tx/api/v1/transfers/multi-chain   (POST /api/v1/transfer/multiple)
 * - POST /tx/api/v1/transactions/batch-get  (POST /api/v1/transfer/details)
 * - GET  /tx/api/v1/transactions/:tx_hash   (GET /transaction/transaction/tx?tx_hash=…)
 * Lists answer `{code: 1, msg, data: [...]}`, the single transaction `{code: 0, msg, data}`;
 * errors `{code: <status>, msg, data: null}`. Histories are global: any valid key may read any
 * address's history (only pushes are per application).
 */
export function queriesRoutes(api: ApiRoutes, queries: QueryUseCases): void {
  /** Sends the 400 of a failed normalisation; true when it did. */
  const rejected = <T>(res: Response, n: Normalized<T>): n is { ok: false; error: string } => {
    if (n.ok) return false;
    sendError(res, 400, n.error);
    return true;
  };

  const search: RequestHandler = async (req, res) => {
    const q = normalizeSearch(req.body);
    if (rejected(res, q)) return;
    const rows = await queries.history(q.value);
    sendOk(res, rows.map(toListRecord), LIST_OK);
  };

  const multiChain: RequestHandler = async (req, res) => {
    const q = normalizeMultiChain(req.body);
    if (rejected(res, q)) return;
    const rows = await queries.history(q.value);
    sendOk(res, rows.map(toListRecord), LIST_OK);
  };

  const batchGet: RequestHandler = async (req, res) => {
    const q = normalizeBatchGet(req.body);
    if (rejected(res, q)) return;
    const rows = await queries.byHashes(q.value.network, q.value.hashes);
    sendOk(res, rows.map(toListRecord), LIST_OK);
  };

  /** The spec's codes and a fixed text for an origin's failure: its detail is only in the log (D174). */
  const transaction = async (q: TransactionQuery, res: Response): Promise<void> => {
    const answer = await queries.transaction(q);
    if (answer.kind === 'origin_timeout') return sendError(res, 504, `chain origin of ${q.network.network} did not answer in time`);
    if (answer.kind === 'origin_failed') return sendError(res, 502, `chain origin of ${q.network.network} failed`);
    sendOk(res, answer.record, V2_OK);
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
