import type { Response } from 'express';
import { Counter } from 'prom-client';
import type { SchemaId } from '@chainpipe/contracts';
import type { ApiRoutes, RouteRequest, RouteSpec } from '@chainpipe/http';
import { API_KEY_HEADER } from '@chainpipe/kline';
import { isUpstreamStatus, upstreamFailure, upstreamJson, upstreamUrl } from '@chainpipe/upstreams';
import type { KlineDeps } from './deps';
import { KLINE_AUTH, KLINE_PREFIX, KlineCode, sendKlineError, sendKlineOk } from './envelope';

/**
 * Market look-ups relayed to the upstream REST API with the caller's query options; `data` is
 * the upstream's body as it came. An upstream 404 is 10003; any other upstream failure (an
 * error status, a rate limit, a timeout, a body that is not JSON) is 99001 `Internal server
 * error`. The upstream key is ours and never leaves the process.
 */
export function marketRoutes(api: ApiRoutes, deps: KlineDeps): void {
  const log = deps.logger.child({ component: 'market-relay' });
  const calls = new Counter({ name: 'chainpipe_kline_market_relay_total', help: 'Market look-ups relayed upstream, by kind and outcome', labelNames: ['kind', 'outcome'], registers: [deps.registry] });

  async function relay(res: Response, kind: string, path: string, query: Record<string, string>): Promise<void> {
    const url = upstreamUrl(deps.market.baseUrl, path);
    try {
      const data = await upstreamJson({ url, query, headers: { [API_KEY_HEADER]: deps.market.apiKey, accept: 'application/json' }, timeoutMs: deps.market.timeoutMs });
      calls.inc({ kind, outcome: 'ok' });
      sendKlineOk(res, data);
    } catch (err) {
      if (isUpstreamStatus(err, 404)) {
        calls.inc({ kind, outcome: 'not_found' });
        return sendKlineError(res, 404, KlineCode.notFound, 'Resource not found');
      }
      calls.inc({ kind, outcome: 'failed' });
      log.warn({ msg: 'market_relay_failed', kind, path: url.pathname, err: upstreamFailure(err) });
      sendKlineError(res, 500, KlineCode.internal, 'Internal server error');
    }
  }

  const pick = (q: Record<string, unknown>, names: string[]) => Object.fromEntries(names.filter((n) => typeof q[n] === 'string').map((n) => [n, q[n] as string]));
  const enc = encodeURIComponent;
  /** A look-up relayed to the provider: `network` and `address` in the path, and the query schema of the provider's options. */
  const lookup = <Q extends SchemaId = never>(path: string, summary: string, upstream: string, query?: Q): RouteSpec<RouteRequest<never, 'http/kline/market-path', Q, never, false>> => ({
    method: 'get',
    path: `${KLINE_PREFIX}${path}`,
    summary,
    description: `Relayed to the market data provider (${upstream}); \`data\` is the provider's body as it came. A resource the provider does not know: 404, code 10003. Any other provider failure: 500, code 99001 \`Internal server error\`.`,
    tags: ['market look-ups'],
    auth: KLINE_AUTH,
    request: { path: 'http/kline/market-path', ...(query ? { query } : {}) },
    ok: { data: { type: 'object', description: "the provider's response body" }, message: 'ok', description: "the provider's body", example: { data: { id: 'eth_0x88e6a0c2ddd26feeb64f039a2c41296fcb3f5640', type: 'pool' } } },
    errors: { 404: 'code 10003: the provider does not know the resource' },
  });

  api.route(lookup('/market/pools/:network/:address', 'Pool detail from the market data provider', 'GET /onchain/networks/{network}/pools/{address}', 'http/kline/market-pool-query'), async (req, res) => {
    const { network, address } = req.params;
    await relay(res, 'pool', `/onchain/networks/${enc(network)}/pools/${enc(address)}`, pick(req.query, ['include', 'include_volume_breakdown', 'include_composition']));
  });

  api.route(
    lookup('/market/tokens/:network/:address/top-holders', 'Top holders of a token from the market data provider', 'GET /onchain/networks/{network}/tokens/{address}/top_holders', 'http/kline/market-top-holders-query'),
    async (req, res) => {
      const { network, address } = req.params;
      await relay(res, 'top_holders', `/onchain/networks/${enc(network)}/tokens/${enc(address)}/top_holders`, pick(req.query, ['holders', 'include_pnl_details']));
    },
  );

  api.route(lookup('/market/coins/:network/:address', 'Coin metadata by contract address from the market data provider', 'GET /coins/{network}/contract/{address}'), async (req, res) => {
    const { network, address } = req.params;
    await relay(res, 'coin', `/coins/${enc(network)}/contract/${enc(address)}`, {});
  });
}
