import express, { type Router } from 'express';
import { normalizeOhlcvQuery } from '@chainpipe/kline';
import { CandleRepository, PoolRepository } from '@chainpipe/kline-store';
import type { KlineDeps } from './deps';
import { sendKlineOk } from './envelope';
import { validOr400 } from './validation';

/**
 * `GET /kline/api/v1/kline/ohlcv`: a bare array of candles, ascending by open_time, from ≤
 * open_time ≤ to. The pool is found by chain and address (`token` is ignored); when base and
 * quote sides are both registered, the active one (then the oldest) is read.
 */
export function ohlcvRoutes(deps: KlineDeps): Router {
  const router = express.Router();
  const pools = new PoolRepository(deps.db);
  const candles = new CandleRepository(deps.db);
  router.get('/kline/ohlcv', async (req, res) => {
    if (!validOr400(deps.contracts, 'http/kline/ohlcv-query', req.query, res, 'Invalid query params')) return;
    const q = normalizeOhlcvQuery(req.query as Record<string, string>);
    const pool = await pools.findForHistory(q.chain_type, q.chain_id, q.pool_address);
    sendKlineOk(res, pool ? await candles.history(pool.id, q.interval, q.from, q.to, q.limit) : []);
  });
  return router;
}
