import type { RequestHandler } from 'express';
import { Counter, Histogram } from 'prom-client';
import type { NetworkInfo } from '@chainpipe/chains';
import { jsonRpcCall } from '@chainpipe/upstreams';
import { sendError, sendOk, type ApiRoutes, type HandlerFor } from '@chainpipe/http';
import { errorMessage } from '@chainpipe/runtime';
import type { TxGatewayDeps } from '../deps';
import { RPC_PROXY_PATHS } from '../management/envelopes';
import { proxyAllows } from '../management/rpc-methods';
import { DEFAULT_RPC_METHOD, methodRefused, proxyFailure, resolveChainNet } from '../management/rpc-proxy';

type RpcProxyDeps = Pick<TxGatewayDeps, 'contracts' | 'logger' | 'registry' | 'rpcProxy' | 'rpcTimeoutMs'>;

function proxyMetrics(deps: RpcProxyDeps) {
  return {
    calls: new Counter({
      name: 'chainpipe_tx_rpc_proxy_calls_total',
      help: 'RPC proxy calls by network and outcome',
      labelNames: ['network', 'outcome'],
      registers: [deps.registry],
    }),
    duration: new Histogram({
      name: 'chainpipe_tx_rpc_proxy_origin_duration_seconds',
      help: 'Time the chain origin took to answer a proxied call',
      labelNames: ['network'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15],
      registers: [deps.registry],
    }),
  };
}

/** The RPC proxy's rate limit (a name in the API's `ApiRoutes` rate limits). */
export const RPC_PROXY_LIMIT = 'rpcProxy';

/**
 * `POST /api/v1/rpcproxy` (and under `/tx/api/v1`): one JSON-RPC call forwarded to the proxy's
 * node of the network named in `x-chain-net` (RPC_PROXY_URLS, else the read nodes), answered
 * `{code: 1, msg: "success", data: result}`. Only the read-only methods of the network's family
 * are forwarded (D170, `rpc-methods.ts`); any other is a 400 before a node is asked. The node
 * call has its own deadline (CHAIN_RPC_TIMEOUT_MS), so a silent node costs the client a 504,
 * never a hung request, and its answer a bound (RPC_PROXY_MAX_ANSWER_BYTES).
 */
export function rpcProxyRoutes(api: ApiRoutes, deps: RpcProxyDeps): void {
  const metrics = proxyMetrics(deps);
  const log = deps.logger.child({ component: 'rpc-proxy' });

  const network: RequestHandler = (req, res, next) => {
    const resolved = resolveChainNet(req.headers['x-chain-net']);
    if (!resolved.ok) {
      metrics.calls.inc({ network: 'unknown', outcome: resolved.status === 500 ? 'missing_network' : 'unknown_network' });
      return sendError(res, resolved.status, resolved.message);
    }
    res.locals.network = resolved.network;
    next();
  };

  const forward: HandlerFor<{ body: 'http/tx/rpc-proxy' }> = async (req, res) => {
    const net = res.locals.network as NetworkInfo;
    const { method = DEFAULT_RPC_METHOD, params = [] } = req.body;
    if (!proxyAllows(net.family, method)) {
      metrics.calls.inc({ network: net.network, outcome: 'method_refused' });
      return sendError(res, 400, methodRefused(net, method));
    }
    const url = deps.rpcProxy.origins.urlFor(net.network);
    if (!url) {
      metrics.calls.inc({ network: net.network, outcome: 'no_origin' });
      return sendError(res, 503, `no chain origin configured for ${net.network}`);
    }
    const end = metrics.duration.startTimer({ network: net.network });
    try {
      const result = await jsonRpcCall(url, method, params, deps.rpcTimeoutMs, {}, deps.rpcProxy.maxAnswerBytes);
      end();
      metrics.calls.inc({ network: net.network, outcome: 'ok' });
      sendOk(res, result === undefined ? null : result, { code: 1, message: 'success' });
    } catch (err) {
      end();
      const failure = proxyFailure(err);
      metrics.calls.inc({ network: net.network, outcome: failure.outcome });
      // The whole failure to the log (a socket error names the node's address); the caller gets failure.message (D174).
      log.warn({ msg: 'rpc_proxy_origin_failed', network: net.network, method, outcome: failure.outcome, status: failure.status, err: errorMessage(err) });
      sendError(res, failure.status, failure.message);
    }
  };

  // Both paths share one count.
  for (const path of RPC_PROXY_PATHS) {
    api.route(
      {
        method: 'post',
        path,
        summary: 'Forward one JSON-RPC call to the node of a network',
        description:
          'The node of the network named in `x-chain-net` answers. Only read-only methods of the network\'s family are forwarded (EVM and Tron: the `eth_`/`net_`/`web3_` reads; Bitcoin: blockchain and raw-transaction reads; Solana: the `get…` reads and `simulateTransaction`); any other method is a 400 and reaches no node. A node\'s JSON-RPC error names its code and message: 400 when the node refused the call (parse error, invalid request, unknown method, invalid params), 502 for its other errors. An answer larger than RPC_PROXY_MAX_ANSWER_BYTES is a 502.',
        tags: ['rpc proxy'],
        auth: 'apiKey',
        // Each call spends the nodes' capacity: per client before the key, per key after it.
        rateLimit: RPC_PROXY_LIMIT,
        // Both body fields are optional: a POST without a body asks for the default method.
        request: { headers: 'http/tx/rpc-proxy-headers', body: 'http/tx/rpc-proxy', bodyRequired: false, bodyExample: { method: 'eth_blockNumber', params: [] } },
        // The network is checked first: a missing x-chain-net is the spec's 500 whatever the body.
        // The per-key rate limit is the route's `rateLimit` of the shared limiter (ApiRoutes):
        // it runs after the key check, before this.
        preValidation: [network],
        ok: { code: 1, data: {}, description: '`data` is the node\'s JSON-RPC result', example: '0x10430e0' },
        errors: {
          400: 'invalid JSON, request validation failed, an unknown network in x-chain-net, a method the proxy does not forward (not read-only), or the node refused the call (JSON-RPC -32700, -32600, -32601, -32602)',
          500: 'x-chain-net is missing (the spec\'s status), or an internal error',
          502: 'the node answered another JSON-RPC error, an answer over the size bound, or could not be reached',
          503: 'no node is configured for this network',
          504: 'the node did not answer in time, or the request ran past 15 s',
        },
      },
      forward,
    );
  }
}
