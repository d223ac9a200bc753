import { Counter, Histogram, type Registry } from 'prom-client';
import type { ChainOrigins, NetworkInfo } from '@chainpipe/chains';
import { errorMessage, type Logger } from '@chainpipe/runtime';
import { jsonRpcCall } from '@chainpipe/upstreams';
import { proxyAllows } from '../management/rpc-methods';
import { methodRefused, proxyFailure, resolveChainNet, type NetworkHeader } from '../management/rpc-proxy';

export interface RpcProxyUseCaseDeps {
  /** The RPC proxy's own nodes (RPC_PROXY_URLS, falling back to the read nodes). */
  origins: ChainOrigins;
  /** The bound of a node's answer (RPC_PROXY_MAX_ANSWER_BYTES). */
  maxAnswerBytes: number;
  /** The node call's own deadline (CHAIN_RPC_TIMEOUT_MS). */
  rpcTimeoutMs: number;
  logger: Logger;
  registry: Registry;
}

function proxyMetrics(registry: Registry) {
  return {
    calls: new Counter({
      name: 'chainpipe_tx_rpc_proxy_calls_total',
      help: 'RPC proxy calls by network and outcome',
      labelNames: ['network', 'outcome'],
      registers: [registry],
    }),
    duration: new Histogram({
      name: 'chainpipe_tx_rpc_proxy_origin_duration_seconds',
      help: 'Time the chain origin took to answer a proxied call',
      labelNames: ['network'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15],
      registers: [registry],
    }),
  };
}

/** The node's result, or the status and fixed text the caller gets (the detail only in the log, D174). */
export type ProxyAnswer = { ok: true; result: unknown } | { ok: false; status: number; message: string };

/** What the RPC proxy route calls: the network of a call, and the call forwarded to its node. */
export interface RpcProxyUseCases {
  /** The network named in `x-chain-net`; a missing (500) or unknown (400) one is counted as refused. */
  network(header: string | string[] | undefined): NetworkHeader;
  /** Forwards one read-only JSON-RPC call (D170: any other method is a 400 and reaches no node). */
  forward(network: NetworkInfo, method: string, params: unknown[]): Promise<ProxyAnswer>;
}

export function rpcProxyUseCases(deps: RpcProxyUseCaseDeps): RpcProxyUseCases {
  const metrics = proxyMetrics(deps.registry);
  const log = deps.logger.child({ component: 'rpc-proxy' });
  return {
    network(header) {
      const resolved = resolveChainNet(header);
      if (!resolved.ok) metrics.calls.inc({ network: 'unknown', outcome: resolved.status === 500 ? 'missing_network' : 'unknown_network' });
      return resolved;
    },

    async forward(net, method, params) {
      if (!proxyAllows(net.family, method)) {
        metrics.calls.inc({ network: net.network, outcome: 'method_refused' });
        return { ok: false, status: 400, message: methodRefused(net, method) };
      }
      const url = deps.origins.urlFor(net.network);
      if (!url) {
        metrics.calls.inc({ network: net.network, outcome: 'no_origin' });
        return { ok: false, status: 503, message: `no chain origin configured for ${net.network}` };
      }
      const end = metrics.duration.startTimer({ network: net.network });
      try {
        const result = await jsonRpcCall(url, method, params, deps.rpcTimeoutMs, {}, deps.maxAnswerBytes);
        end();
        metrics.calls.inc({ network: net.network, outcome: 'ok' });
        return { ok: true, result };
      } catch (err) {
        end();
        const failure = proxyFailure(err);
        metrics.calls.inc({ network: net.network, outcome: failure.outcome });
        // The whole failure to the log (a socket error names the node's address); the caller gets failure.message (D174).
        log.warn({ msg: 'rpc_proxy_origin_failed', network: net.network, method, outcome: failure.outcome, status: failure.status, err: errorMessage(err) });
        return { ok: false, status: failure.status, message: failure.message };
      }
    },
  };
}
