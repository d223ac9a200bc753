import type { HttpKlineOhlcvList } from '@chainpipe/contracts';
import { requestParams, type ApiRoutes } from '@chainpipe/http';
import { normalizeOhlcvQuery } from '@chainpipe/kline';
import { CandleRepository, PoolRepository } from '@chainpipe/kline-store';
import { EXAMPLE_CANDLES } from './api-examples';
import type { KlineDeps } from './deps';
import { KLINE_AUTH, KLINE_PREFIX, sendKlineOk } from './envelope';

/**
 * `GET /kline/api/v1/kline/ohlcv`: a bare array of candles, ascending by open_time, from ≤
 * open_time ≤ to. The pool is found by chain and address (`token` is ignored); when base and
 * quote sides are both registered, the active one (then the oldest) is read.
 */
export function ohlcvRoutes(api: ApiRoutes, deps: KlineDeps): void {
  const pools = new PoolRepository(deps.db);
  const candles = new CandleRepository(deps.db);
  api.route(
    {
      method: 'get',
      path: `${KLINE_PREFIX}/kline/ohlcv`,
      summary: 'Candle history of a pool',
      description:
        'Candles with from ≤ open_time ≤ to, ascending, at most `limit` (default 1000, 1–5000). `from`/`to` above 10000000000 are read as milliseconds. The pool is matched by chain and `pool_address`; `token` is ignored. An unknown pool answers an empty array.',
      tags: ['candles'],
      auth: KLINE_AUTH,
      request: { query: 'http/kline/ohlcv-query' },
      ok: { data: 'http/kline/ohlcv-list', message: 'ok', description: 'the candles (not wrapped in `items`)', example: EXAMPLE_CANDLES },
    },
    async (req, res) => {
      const q = normalizeOhlcvQuery(requestParams(res));
      const pool = await pools.findForHistory(q.chain_type, q.chain_id, q.pool_address);
      sendKlineOk(res, (pool ? await candles.history(pool.id, q.interval, q.from, q.to, q.limit) : []) satisfies HttpKlineOhlcvList);
    },
  );
}
