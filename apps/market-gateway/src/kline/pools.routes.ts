import express, { type Router } from 'express';
import { Counter } from 'prom-client';
import { normalizeChainType, pagination, type TokenSide } from '@chainpipe/kline';
import { PoolRepository } from '@chainpipe/kline-store';
import { errorMessage } from '@chainpipe/runtime';
import type { KlineDeps } from './deps';
import { KlineCode, sendKlineError, sendKlineOk } from './envelope';
import { validOr400 } from './validation';

/**
 * Pool registration and activation (`/api/v1/admin/pools`). The table is the source of truth:
 * activate/deactivate store the new state first, then publish a best-effort notice on
 * kline.pools.v1 for the ingester; a failed notice is logged and counted and the stored state
 * stands (the ingester also re-reads the table periodically).
 */
export function poolsRoutes(deps: KlineDeps): Router {
  const router = express.Router();
  const repo = new PoolRepository(deps.db);
  const log = deps.logger.child({ component: 'kline-pools' });
  const noticeFailures = new Counter({ name: 'chainpipe_kline_pool_notice_failures_total', help: 'Pool activations stored but not announced on kline.pools.v1', registers: [deps.registry] });

  const poolId = (req: express.Request, res: express.Response): number | undefined =>
    validOr400(deps.contracts, 'http/kline/pool-id-path', { id: req.params.id }, res, 'Invalid path params') ? Number(req.params.id) : undefined;

  router.post('/admin/pools', async (req, res) => {
    if (!validOr400(deps.contracts, 'http/kline/pool-create', req.body, res, 'Invalid request body')) return;
    const b = req.body as { chain_type: string; chain_id: number; network_id: string; pool_address: string; token?: TokenSide; dex_id?: string; label?: string };
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
  });

  router.get('/admin/pools', async (req, res) => {
    if (!validOr400(deps.contracts, 'http/kline/pools-list-query', req.query, res, 'Invalid query params')) return;
    const page = req.query.page ? Number(req.query.page) : 1;
    const pageSize = req.query.page_size ? Number(req.query.page_size) : 20;
    const { items, total } = await repo.list(page, pageSize);
    sendKlineOk(res, { items, pagination: pagination(page, pageSize, total) });
  });

  router.get('/admin/pools/:id', async (req, res) => {
    const id = poolId(req, res);
    if (id === undefined) return;
    const pool = await repo.get(id);
    if (!pool) return sendKlineError(res, 404, KlineCode.poolNotFound, 'Pool not found');
    sendKlineOk(res, pool);
  });

  for (const [verb, active] of [['activate', true], ['deactivate', false]] as const) {
    router.patch(`/admin/pools/:id/${verb}`, async (req, res) => {
      const id = poolId(req, res);
      if (id === undefined) return;
      const pool = await repo.setActive(id, active);
      if (!pool) return sendKlineError(res, 404, KlineCode.poolNotFound, 'Pool not found');
      try {
        await deps.publishPoolNotice({ action: active ? 'activated' : 'deactivated', pool_id: id, at: deps.now() });
      } catch (err) {
        noticeFailures.inc();
        log.warn({ msg: 'pool_notice_failed', poolId: id, action: verb, err: errorMessage(err) });
      }
      log.info({ msg: `pool_${verb}d`, poolId: id });
      sendKlineOk(res, pool);
    });
  }
  return router;
}
