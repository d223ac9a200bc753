import type { Request, RequestHandler } from 'express';
import { Counter } from 'prom-client';
import type { HttpKlinePoolPage } from '@chainpipe/contracts';
import type { ApiRoutes } from '@chainpipe/http';
import { normalizeChainType, pagination } from '@chainpipe/kline';
import { PoolRepository } from '@chainpipe/kline-store';
import { errorMessage } from '@chainpipe/runtime';
import { EXAMPLE_POOL } from './api-examples';
import type { KlineDeps } from './deps';
import { KLINE_ADMIN_PREFIX, KLINE_AUTH, KLINE_OPERATOR_AUTH, KlineCode, sendKlineError, sendKlineOk } from './envelope';

const TAGS = ['pools'];
const POOL_OK = { data: 'http/kline/pool', message: 'ok', example: EXAMPLE_POOL } as const;

/**
 * Pool registration and activation (`/api/v1/admin/pools`): registering, activating and
 * deactivating need an operator's key (every application's candles depend on them), the reads
 * any key. The table is the source of truth:
 * activate/deactivate store the new state first, then publish a best-effort notice on
 * kline.pools.v1 for the ingester; a failed notice is logged and counted and the stored state
 * stands (the ingester also re-reads the table periodically).
 */
export function poolsRoutes(api: ApiRoutes, deps: KlineDeps): void {
  const repo = new PoolRepository(deps.db);
  const log = deps.logger.child({ component: 'kline-pools' });
  const noticeFailures = new Counter({ name: 'chainpipe_kline_pool_notice_failures_total', help: 'Pool activations stored but not announced on kline.pools.v1', registers: [deps.registry] });
  const poolId = (req: Request) => Number(req.params.id);
  // An id past the int4 column is no pool: the spec's 404, like any unknown id.
  const poolLookup = { params: ['id'], notFound: ((_req, res) => sendKlineError(res, 404, KlineCode.poolNotFound, 'Pool not found')) as RequestHandler };

  api.route(
    {
      method: 'post',
      path: `${KLINE_ADMIN_PREFIX}/admin/pools`,
      summary: 'Register a pool (inactive)',
      description: 'Pools are shared by every application: an operator key only (D171).',
      tags: TAGS,
      auth: KLINE_OPERATOR_AUTH,
      request: {
        body: 'http/kline/pool-create',
        bodyExample: { chain_type: 'ethereum', chain_id: 1, network_id: 'eth', pool_address: EXAMPLE_POOL.pool_address, token: 'base', dex_id: 'uniswap_v3', label: 'USDC/WETH 0.05%' },
      },
      ok: { ...POOL_OK, example: { ...EXAMPLE_POOL, is_active: false }, description: 'the new pool record, `is_active` false' },
      errors: { 409: 'code 10004 `Pool already exists`' },
    },
    async (req, res) => {
      const b = req.body;
      const created = await repo.create({
        chain_type: normalizeChainType(b.chain_type)!,
        chain_id: b.chain_id,
        network_id: b.network_id.trim(),
        pool_address: b.pool_address.trim(),
        token: b.token ?? 'base',
        dex_id: b.dex_id ?? null,
        label: b.label ?? null,
      });
      if (!created) return sendKlineError(res, 409, KlineCode.conflict, 'Pool already exists');
      log.info({ msg: 'pool_created', poolId: created.id, chainType: created.chain_type, chainId: created.chain_id });
      sendKlineOk(res, created);
    },
  );

  api.route(
    {
      method: 'get',
      path: `${KLINE_ADMIN_PREFIX}/admin/pools`,
      summary: 'Registered pools, a page at a time',
      tags: TAGS,
      auth: KLINE_AUTH,
      request: { query: 'http/kline/pools-list-query' },
      ok: {
        data: 'http/kline/pool-page',
        message: 'ok',
        description: '`{ items, pagination }`',
        example: { items: [EXAMPLE_POOL], pagination: { page: 1, pageSize: 20, total: 1, totalPages: 1 } },
      },
    },
    async (req, res) => {
      const page = req.query.page ? Number(req.query.page) : 1;
      const pageSize = req.query.page_size ? Number(req.query.page_size) : 20;
      const { items, total } = await repo.list(page, pageSize);
      sendKlineOk(res, { items, pagination: pagination(page, pageSize, total) } satisfies HttpKlinePoolPage);
    },
  );

  api.route(
    {
      method: 'get',
      path: `${KLINE_ADMIN_PREFIX}/admin/pools/:id`,
      summary: 'One pool',
      tags: TAGS,
      auth: KLINE_AUTH,
      request: { path: 'http/kline/pool-id-path', lookup: poolLookup },
      ok: { ...POOL_OK, description: 'the pool record' },
      errors: { 404: 'code 60001 `Pool not found`' },
    },
    async (req, res) => {
      const pool = await repo.get(poolId(req));
      if (!pool) return sendKlineError(res, 404, KlineCode.poolNotFound, 'Pool not found');
      sendKlineOk(res, pool);
    },
  );

  for (const [verb, active] of [['activate', true], ['deactivate', false]] as const) {
    api.route(
      {
        method: 'patch',
        path: `${KLINE_ADMIN_PREFIX}/admin/pools/:id/${verb}`,
        summary: active ? 'Start collecting candles of a pool' : 'Stop collecting candles of a pool',
        description: `Stores the new state, then tells the ingester (best effort: a failed notice does not roll back the stored state; the ingester re-reads the table). An operator key only (D171).`,
        tags: TAGS,
        auth: KLINE_OPERATOR_AUTH,
        request: { path: 'http/kline/pool-id-path', lookup: poolLookup },
        ok: { ...POOL_OK, example: { ...EXAMPLE_POOL, is_active: active }, description: `the updated pool record, \`is_active\` ${active}` },
        errors: { 404: 'code 60001 `Pool not found`' },
      },
      async (req, res) => {
        const id = poolId(req);
        const pool = await repo.setActive(id, active);
        if (!pool) return sendKlineError(res, 404, KlineCode.poolNotFound, 'Pool not found');
        try {
          await deps.publishPoolNotice({ action: active ? 'activated' : 'deactivated', pool_id: id, at: deps.clock.now() });
        } catch (err) {
          noticeFailures.inc();
          log.warn({ msg: 'pool_notice_failed', poolId: id, action: verb, err: errorMessage(err) });
        }
        log.info({ msg: `pool_${verb}d`, poolId: id });
        sendKlineOk(res, pool);
      },
    );
  }
}
