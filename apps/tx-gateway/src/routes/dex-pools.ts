import type { HttpTxDexPoolTrades } from '@chainpipe/contracts';
import { requestParams, sendError, sendOk, type ApiRoutes } from '@chainpipe/http';
import { parsePoolRef, parseTradesLimit } from '../management/dex-pools';
import type { DexPoolUseCases } from '../use-cases/dex-pools';

/**
 * Pool trades: registration (POST / DELETE, global like the pools themselves) and the latest
 * trades of a pool, newest first, as TransactionResult (optional fields omitted when undefined,
 * nulls kept). tx-matcher appends to the FIFO; a pool registered now collects from the next
 * matched block on. Over the pool use-cases.
 */
export function dexPoolsRoutes(api: ApiRoutes, pools: DexPoolUseCases): void {
  const tags = ['pool trades'];
  const done = { data: { const: 'success' }, description: 'done', example: 'success' };

  api.route(
    {
      method: 'post',
      path: '/tx/api/v1/dex-pools',
      summary: 'Register a DEX pool whose trades are kept',
      description: 'Pools are shared by every application: an operator key only (D171).',
      tags,
      auth: 'operatorKey',
      request: { body: 'http/tx/dex-pool-register', bodyExample: { chainType: 'ethereum', chainId: 1, poolAddress: '0xb4e16d0168e52d35cacd2c6185b44281ec28c9dc' } },
      ok: done,
    },
    async (req, res) => {
      const ref = parsePoolRef(req.body, req.body.poolAddress);
      if (!ref.ok) return sendError(res, 400, ref.error);
      await pools.register(ref.value);
      sendOk(res, 'success');
    },
  );

  api.route(
    {
      method: 'delete',
      path: '/tx/api/v1/dex-pools/:poolAddress',
      summary: 'Remove a DEX pool and its kept trades',
      description: 'Pools are shared by every application: an operator key only (D171).',
      tags,
      auth: 'operatorKey',
      request: { params: 'http/tx/dex-pool-params' },
      ok: done,
    },
    async (_req, res) => {
      const p = requestParams(res);
      const ref = parsePoolRef(p, p.poolAddress);
      if (!ref.ok) return sendError(res, 400, ref.error);
      await pools.remove(ref.value);
      sendOk(res, 'success');
    },
  );

  api.route(
    {
      method: 'get',
      path: '/tx/api/v1/dex-pools/:poolAddress/trades',
      summary: 'Latest trades of a registered DEX pool',
      tags,
      auth: 'apiKey',
      request: { params: 'http/tx/dex-pool-params' },
      ok: { data: 'http/tx/dex-pool-trades', description: 'newest first', example: { items: [] } },
    },
    async (_req, res) => {
      const p = requestParams(res);
      const ref = parsePoolRef(p, p.poolAddress);
      if (!ref.ok) return sendError(res, 400, ref.error);
      const limit = parseTradesLimit(p.limit);
      if (!limit.ok) return sendError(res, 400, limit.error);
      sendOk(res, { items: await pools.latest(ref.value, limit.value) } satisfies HttpTxDexPoolTrades);
    },
  );
}
