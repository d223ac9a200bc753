import express, { type Response, type Router } from 'express';
import { PRINCIPAL, sendError, sendOk, validateBody, type Principal } from '@chainpipe/http';
import type { TxGatewayDeps } from '../deps';
import { configView, insertValues, planReplace, planUpdate, retryStatusView, sealColumns, type AppConfigInput } from '../management/app-config';
import { AppConfigRepository } from '../management/app-config.repository';

/**
 * Until `TxGatewayDeps` carries it (config ALLOW_PRIVATE_WEBHOOK_TARGETS), private and plain-http
 * webhook targets are refused: the safe default.
 */

/**
 * Push configuration of the caller's application (GET/POST/PUT/DELETE /tx/api/v1/app/config)
 * and its webhook retry status. Every query is scoped by the API key's application; the webhook
 * secret is sealed before it is stored and never read back out through this API.
 */
export function appConfigRoutes(deps: TxGatewayDeps): Router {
  const router = express.Router();
  const repo = new AppConfigRepository(deps.db);
  const log = deps.logger.child({ component: 'app-config' });
  const targetOptions = { allowPrivate: deps.allowPrivateWebhookTargets };
  const appOf = (res: Response) => (res.locals[PRINCIPAL] as Principal).appId;

  const seal = (plain: string) => deps.secretBox.seal(plain);

  /** Fields written, for the log: names only, never values (the secret must not reach logs). */
  const fieldsOf = (input: AppConfigInput) => Object.keys(input).sort();

  router.get('/tx/api/v1/app/config', async (_req, res) => {
    const row = await repo.find(appOf(res));
    sendOk(res, row ? configView(row) : null);
  });

  router.post(
    '/tx/api/v1/app/config',
    (req, res, next) => {
      // Named before the schema's generic "is not allowed": the field exists, just not here.
      if (req.body && typeof req.body === 'object' && !Array.isArray(req.body) && 'is_active' in req.body) {
        return sendError(res, 400, 'is_active can only be changed with PUT');
      }
      next();
    },
    validateBody(deps.contracts, 'http/tx/app-config-post'),
    async (req, res) => {
      const input = req.body as AppConfigInput;
      const plan = planReplace(input, targetOptions);
      if (!plan.ok) return sendError(res, 400, plan.error);
      const appId = appOf(res);
      await repo.replace(appId, sealColumns(plan.values, seal), new Date(deps.now()));
      log.info({ msg: 'app_config_replaced', appId, fields: fieldsOf(input) });
      sendOk(res, 'success');
    },
  );

  router.put('/tx/api/v1/app/config', validateBody(deps.contracts, 'http/tx/app-config-put'), async (req, res) => {
    const input = req.body as AppConfigInput;
    const plan = planUpdate(input, targetOptions);
    if (!plan.ok) return sendError(res, 400, plan.error);
    const appId = appOf(res);
    await repo.update(appId, sealColumns(plan.values, seal), sealColumns(insertValues(plan.values), seal), new Date(deps.now()));
    log.info({ msg: 'app_config_updated', appId, fields: fieldsOf(input) });
    sendOk(res, 'success');
  });

  router.delete('/tx/api/v1/app/config', async (_req, res) => {
    const appId = appOf(res);
    const deleted = await repo.remove(appId);
    log.info({ msg: 'app_config_deleted', appId, existed: deleted });
    sendOk(res, 'success');
  });

  router.get('/tx/api/v1/app/webhook/retry/status', async (_req, res) => {
    const appId = appOf(res);
    const [row, queue] = await Promise.all([repo.find(appId), repo.queueSummary(appId)]);
    sendOk(res, retryStatusView(appId, row, queue));
  });

  return router;
}
