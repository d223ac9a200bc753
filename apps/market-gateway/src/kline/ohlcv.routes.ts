import type { HttpKlineOhlcvList } from '@chainpipe/contracts';
import { requestParams, type ApiRoutes } from '@chainpipe/http';
import { normalizeOhlcvQuery, type PoolRecord } from '@chainpipe/kline';
import { CandleRepository, PoolRepository } from '@chainpipe/kline-store';
import { RefreshedValue } from '@chainpipe/runtime';
import { EXAMPLE_CANDLES } from './api-examples';
import type { KlineDeps } from './deps';
import { KLINE_AUTH, KLINE_PREFIX, sendKlineOk } from './envelope';

/**
 * How long the pool a history query names is taken from memory: looked up again behind the
 * requests once 2 s old and never answered past 10 s (a pool's active side switching is seen
 * within 10 s). A pool not found is not kept: one registered a moment later is read at once.
 */
export const HISTORY_POOL_AGE = { refreshMs: 2_000, maxAgeMs: 10_000, maxEntries: 10_000 } as const;

/**
 * `GET /kline/api/v1/kline/ohlcv`: a bare array of candles, ascending by open_time, from ≤
 * open_time ≤ to. The pool is found by chain and address (`token` is ignored); when base and
 * quote sides are both registered, the active one (then the oldest) is read.
 */
export function ohlcvRoutes(api: ApiRoutes, deps: KlineDeps): void {
  const pools = new PoolRepository(deps.db);
  const candles = new CandleRepository(deps.db);
  const held = new Map<string, RefreshedValue<PoolRecord | undefined>>();
  /** The pool of a history query: the statement before the candles, kept so a chart's pages cost one statement each. */
  const poolFor = async (chainType: string, chainId: number, poolAddress: string): Promise<PoolRecord | undefined> => {
    const key = `${chainType}|${chainId}|${poolAddress.toLowerCase()}`;
    let entry = held.get(key);
    if (!entry) {
      if (held.size >= HISTORY_POOL_AGE.maxEntries) held.clear();
      entry = new RefreshedValue({ load: () => pools.findForHistory(chainType, chainId, poolAddress), refreshMs: HISTORY_POOL_AGE.refreshMs, maxAgeMs: HISTORY_POOL_AGE.maxAgeMs, clock: deps.clock });
      held.set(key, entry);
    }
    const pool = await entry.get();
    if (!pool && held.get(key) === entry) held.delete(key);
    return pool;
  };
  api.route(
    {
      method: 'get',
      path: `${KLINE_PREFIX}/kline/ohlcv`,
      summary: 'Candle history of a pool',
      description:
        'Candles with from ≤ open_time ≤ to, ascending, at most `limit` (default 1000, 1–5000). `from`/`to` above 10000000000 are read as milliseconds. The pool is matched by chain and `pool_address`; `token` is ignored. An unknown pool answers an empty array. The pool found is kept in memory for a few seconds: a switch of its active side is seen within 10 s.',
      tags: ['candles'],
      auth: KLINE_AUTH,
      request: { query: 'http/kline/ohlcv-query' },
      ok: { data: 'http/kline/ohlcv-list', message: 'ok', description: 'the candles (not wrapped in `items`)', example: EXAMPLE_CANDLES },
    },
    async (req, res) => {
      const q = normalizeOhlcvQuery(requestParams(res));
      const pool = await poolFor(q.chain_type, q.chain_id, q.pool_address);
      sendKlineOk(res, (pool ? await candles.history(pool.id, q.interval, q.from, q.to, q.limit) : []) satisfies HttpKlineOhlcvList);
    },
  );
}
