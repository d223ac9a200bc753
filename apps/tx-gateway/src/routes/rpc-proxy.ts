import type { RequestHandler } from 'express';
import type { NetworkInfo } from '@chainpipe/chains';
import { sendError, sendOk, type ApiRoutes, type HandlerFor } from '@chainpipe/http';
import { RPC_PROXY_PATHS } from '../management/envelopes';
import { DEFAULT_RPC_METHOD } from '../management/rpc-proxy';
import type { RpcProxyUseCases } from '../use-cases/rpc-proxy';

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
export function rpcProxyRoutes(api: ApiRoutes, proxy: RpcProxyUseCases): void {
  const network: RequestHandler = (req, res, next) => {
    const resolved = proxy.network(req.headers['x-chain-net']);
    if (!resolved.ok) return sendError(res, resolved.status, resolved.message);
    res.locals.network = resolved.network;
    next();
  };

  const forward: HandlerFor<{ body: 'http/tx/rpc-proxy' }> = async (req, res) => {
    const { method = DEFAULT_RPC_METHOD, params = [] } = req.body;
    const answer = await proxy.forward(res.locals.network as NetworkInfo, method, params);
    if (!answer.ok) return sendError(res, answer.status, answer.message);
    sendOk(res, answer.result === undefined ? null : answer.result, { code: 1, message: 'success' });
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
