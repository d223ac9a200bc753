import { sendOk, type ApiRoutes } from '@chainpipe/http';
import { normalizeChainType } from '@chainpipe/chains';
import type { Logger } from '@chainpipe/runtime';
import { EXAMPLE_POOL_DETAIL } from './api-examples';
import { PRICE_AUTH, PRICE_PREFIX, PriceCode, sendPriceError } from './envelope';
import { PoolUpstreamError, type PoolDetailService } from './pool-detail.service';

const one = (v: unknown): unknown => (Array.isArray(v) ? v[0] : v);
const present = (v: unknown): v is string => typeof v === 'string' && v.trim() !== '';

/**
 * `GET /pools?chain_type&chain_id&pool_address`: 20001 per missing parameter (in that order),
 * `data` null for an unknown chain type, chain or pool, 503/30001 when the upstream fails.
 */
export function poolsRoutes(api: ApiRoutes, deps: { pools: Pick<PoolDetailService, 'detail'>; logger: Logger }): void {
  api.route(
    {
      method: 'get',
      path: `${PRICE_PREFIX}/pools`,
      summary: 'Detail of a DEX liquidity pool',
      description:
        'Relayed from the pool data provider and cached for 1 hour per (chain_type, chain_id, pool_address). An unknown chain type, chain or pool: HTTP 200, `code` 0, `data` null. A missing parameter: 400, `code` 20001 (`chain_type is required`, `chain_id is required`, `pool_address is required`, checked in that order).',
      tags: ['pools'],
      auth: PRICE_AUTH,
      request: { query: 'http/price/pools-query', checkedByHandler: true },
      ok: { data: 'http/price/pool-detail', description: 'the pool detail, or null', example: EXAMPLE_POOL_DETAIL },
      errors: { 400: 'code 20001: a missing or malformed parameter', 503: 'code 30001 `Failed to fetch pool data`: the provider or the cache failed' },
    },
    async (req, res) => {
    const chainTypeRaw = one(req.query.chain_type);
    const chainIdRaw = one(req.query.chain_id);
    const addressRaw = one(req.query.pool_address);
    // Checked one by one, in the spec's order, so that each narrows to a string.
    if (!present(chainTypeRaw)) return sendPriceError(res, 400, PriceCode.missingParameter, 'chain_type is required');
    if (!present(chainIdRaw)) return sendPriceError(res, 400, PriceCode.missingParameter, 'chain_id is required');
    if (!present(addressRaw)) return sendPriceError(res, 400, PriceCode.missingParameter, 'pool_address is required');
    const chainIdText = chainIdRaw.trim();
    if (!/^\d{1,18}$/.test(chainIdText)) return sendPriceError(res, 400, PriceCode.missingParameter, 'chain_id must be an integer');
    const address = addressRaw.trim();
    if (address.length > 200) return sendPriceError(res, 400, PriceCode.missingParameter, 'pool_address must be at most 200 characters');
    const chainType = normalizeChainType(chainTypeRaw);
    if (!chainType) return sendOk(res, null);
    try {
      sendOk(res, await deps.pools.detail(chainType, Number(chainIdText), address));
    } catch (err) {
      // The upstream, the cache or the chains table failing: all are the spec's internal query failure.
      if (!(err instanceof PoolUpstreamError)) deps.logger.error({ msg: 'pool_lookup_failed', err });
      sendPriceError(res, 503, PriceCode.poolFetchFailed, 'Failed to fetch pool data');
    }
  });
}
