import express, { type Response, type Router } from 'express';
import { Counter } from 'prom-client';
import { API_KEY_HEADER } from '@chainpipe/kline';
import { errorMessage } from '@chainpipe/runtime';
import type { KlineDeps } from './deps';
import { KlineCode, sendKlineError, sendKlineOk } from './envelope';
import { validOr400 } from './validation';

/**
 * Market look-ups relayed to the upstream REST API with the caller's query options; `data` is
 * the upstream's body as it came. An upstream 404 is 10003; any other upstream failure (an
 * error status, a rate limit, a timeout, a body that is not JSON) is 99001 `Internal server
 * error`. The upstream key is ours and never leaves the process.
 */
export function marketRoutes(deps: KlineDeps): Router {
  const router = express.Router();
  const log = deps.logger.child({ component: 'market-relay' });
  const calls = new Counter({ name: 'chainpipe_kline_market_relay_total', help: 'Market look-ups relayed upstream, by kind and outcome', labelNames: ['kind', 'outcome'], registers: [deps.registry] });

  async function relay(res: Response, kind: string, path: string, query: Record<string, string>): Promise<void> {
    const url = new URL(deps.market.baseUrl.replace(/\/$/, '') + path);
    for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
    try {
      const upstream = await fetch(url, { headers: { [API_KEY_HEADER]: deps.market.apiKey, accept: 'application/json' }, signal: AbortSignal.timeout(deps.market.timeoutMs) });
      const text = await upstream.text();
      if (upstream.status === 404) {
        calls.inc({ kind, outcome: 'not_found' });
        return sendKlineError(res, 404, KlineCode.notFound, 'Resource not found');
      }
      if (!upstream.ok) throw new Error(`upstream answered ${upstream.status}: ${text.slice(0, 200)}`);
      const data = JSON.parse(text);
      calls.inc({ kind, outcome: 'ok' });
      sendKlineOk(res, data);
    } catch (err) {
      calls.inc({ kind, outcome: 'failed' });
      log.warn({ msg: 'market_relay_failed', kind, path: url.pathname, err: errorMessage(err) });
      sendKlineError(res, 500, KlineCode.internal, 'Internal server error');
    }
  }

  const pathOk = (req: express.Request, res: Response) => validOr400(deps.contracts, 'http/kline/market-path', req.params, res, 'Invalid path params');
  const pick = (q: Record<string, unknown>, names: string[]) => Object.fromEntries(names.filter((n) => typeof q[n] === 'string').map((n) => [n, q[n] as string]));
  const enc = encodeURIComponent;

  router.get('/market/pools/:network/:address', async (req, res) => {
    if (!pathOk(req, res) || !validOr400(deps.contracts, 'http/kline/market-pool-query', req.query, res, 'Invalid query params')) return;
    const { network, address } = req.params;
    await relay(res, 'pool', `/onchain/networks/${enc(network)}/pools/${enc(address)}`, pick(req.query, ['include', 'include_volume_breakdown', 'include_composition']));
  });

  router.get('/market/tokens/:network/:address/top-holders', async (req, res) => {
    if (!pathOk(req, res) || !validOr400(deps.contracts, 'http/kline/market-top-holders-query', req.query, res, 'Invalid query params')) return;
    const { network, address } = req.params;
    await relay(res, 'top_holders', `/onchain/networks/${enc(network)}/tokens/${enc(address)}/top_holders`, pick(req.query, ['holders', 'include_pnl_details']));
  });

  router.get('/market/coins/:network/:address', async (req, res) => {
    if (!pathOk(req, res)) return;
    const { network, address } = req.params;
    await relay(res, 'coin', `/coins/${enc(network)}/contract/${enc(address)}`, {});
  });
  return router;
}
