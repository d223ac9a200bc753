import { networkByName, parseChainOrigins, type ChainOrigins, type NetworkInfo } from '@chainpipe/chains';
import { ConfigError } from '@chainpipe/runtime';
import { OriginError } from '@chainpipe/upstreams';

/**
 * The RPC proxy's decisions, apart from the call itself: which network a request names, and
 * what a client sees when the chain origin fails.
 */

export const DEFAULT_RPC_METHOD = 'eth_blockNumber';

export type NetworkHeader = { ok: true; network: NetworkInfo } | { ok: false; status: 400 | 500; message: string };

/** `x-chain-net`: missing → 500 (the spec's code for it), unknown → 400. */
export function resolveChainNet(raw: string | string[] | undefined): NetworkHeader {
  const value = Array.isArray(raw) ? raw[0] : raw;
  if (value === undefined || value.trim() === '') return { ok: false, status: 500, message: 'x-chain-net header required' };
  const network = networkByName(value);
  if (!network) return { ok: false, status: 400, message: `unknown network ${JSON.stringify(value.trim().slice(0, 64))} in x-chain-net` };
  return { ok: true, network };
}

/**
 * The proxy's nodes: RPC_PROXY_URLS where it names a network, the read nodes (CHAIN_RPC_URLS /
 * CHAIN_RPC_DEFAULT_BASE of this service) for the rest. A deployment points the proxy at a quota
 * of its own here, apart from the nodes the platform reads through; the nodes order-executor
 * broadcasts through are that service's own settings and never reach this one.
 */
export function rpcProxyOrigins(proxyUrls: string, readNodes: ChainOrigins): ChainOrigins {
  let own: ChainOrigins;
  try {
    own = parseChainOrigins(proxyUrls, null, 'RPC_PROXY_URLS');
  } catch (err) {
    throw new ConfigError([(err as Error).message]);
  }
  return { urlFor: (network) => own.urlFor(network) ?? readNodes.urlFor(network) };
}

/** A method the proxy does not forward to this network's family (D170): the node is never asked. */
export function methodRefused(network: NetworkInfo, method: string): string {
  return `method ${method} is not allowed on ${network.network}: the proxy forwards read-only calls only`;
}

export type OriginOutcome = 'rpc_error' | 'timeout' | 'unreachable' | 'http_error' | 'invalid_response' | 'too_large' | 'failed';

export interface ProxyFailure {
  status: number;
  message: string;
  outcome: OriginOutcome;
}

const MAX_MESSAGE = 500;

/**
 * JSON-RPC's own codes for a call the caller got wrong (parse error, invalid request, method not
 * found, invalid params): the node refused the request, not failed it.
 */
const CALLER_ERROR_CODES = new Set([-32700, -32600, -32601, -32602]);

/**
 * A failed origin call as the client sees it. A JSON-RPC error of the node is the node's answer
 * but not a result, with the node's code and message in `msg`: 400 when the call itself was wrong
 * (an unknown method, bad params: the spec's "request parameter validation failed"), 502 for the
 * node's own failures. Origin too slow: 504. Down, non-2xx or not JSON-RPC: 502. Texts never
 * include the origin URL (it may carry a provider key).
 */
export function proxyFailure(err: unknown): ProxyFailure {
  if (!(err instanceof OriginError)) return { status: 502, message: 'origin call failed', outcome: 'failed' };
  switch (err.kind) {
    case 'rpc': {
      const code = err.rpcError?.code;
      const text = typeof err.rpcError?.message === 'string' ? err.rpcError.message : 'error';
      return { status: typeof code === 'number' && CALLER_ERROR_CODES.has(code) ? 400 : 502, message: `origin error ${typeof code === 'number' ? code : 'unknown'}: ${text}`.slice(0, MAX_MESSAGE), outcome: 'rpc_error' };
    }
    case 'timeout':
      return { status: 504, message: err.message.slice(0, MAX_MESSAGE), outcome: 'timeout' };
    case 'unreachable':
      return { status: 502, message: 'origin unreachable', outcome: 'unreachable' };
    case 'http':
      return { status: 502, message: err.message.slice(0, MAX_MESSAGE), outcome: 'http_error' };
    case 'invalid':
    default:
      // The answer bound (RPC_PROXY_MAX_ANSWER_BYTES) reads "origin answered more than N bytes".
      if (err.message.startsWith('origin answered more than ')) return { status: 502, message: err.message.slice(0, MAX_MESSAGE), outcome: 'too_large' };
      return { status: 502, message: `origin answered an invalid JSON-RPC response: ${err.message}`.slice(0, MAX_MESSAGE), outcome: 'invalid_response' };
  }
}
