import { randomInt } from 'node:crypto';
import { networkByName, NETWORKS } from './networks';

/** A chain origin failed: unreachable, timed out, answered non-2xx, or answered a JSON-RPC error. */
export class OriginError extends Error {
  constructor(
    message: string,
    readonly kind: 'unreachable' | 'timeout' | 'http' | 'rpc' | 'invalid',
    readonly rpcError?: { code: number; message: string; data?: unknown },
  ) {
    super(message);
    this.name = 'OriginError';
  }
}

export interface ChainOrigins {
  /** The node URL of a network, or undefined when the network is unknown. */
  urlFor(network: string): string | undefined;
}

/**
 * Origins from config: explicit `network=url` pairs, and `<base>/<network>` for every other
 * known network (in development the base is the upstream simulator).
 */
export function parseChainOrigins(pairs: string, defaultBase: string | null): ChainOrigins {
  const explicit = new Map<string, string>();
  for (const pair of pairs.split(',').map((s) => s.trim()).filter(Boolean)) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new Error(`CHAIN_RPC_URLS entry ${JSON.stringify(pair)} is not network=url`);
    const network = pair.slice(0, eq).trim().toLowerCase();
    const url = pair.slice(eq + 1).trim();
    if (!networkByName(network)) throw new Error(`CHAIN_RPC_URLS names unknown network ${network}`);
    new URL(url); // throws on a malformed URL: config errors surface at boot
    explicit.set(network, url);
  }
  const base = defaultBase?.replace(/\/+$/, '');
  return {
    urlFor(network) {
      const n = networkByName(network);
      if (!n) return undefined;
      return explicit.get(n.network) ?? (base ? `${base}/${n.network}` : undefined);
    },
  };
}

/**
 * One JSON-RPC 2.0 call over HTTP with a hard timeout. Resolves with `result`; rejects with an
 * OriginError saying what went wrong. Never hangs past `timeoutMs`.
 */
export async function jsonRpcCall(url: string, method: string, params: unknown[], timeoutMs: number, headers: Record<string, string> = {}): Promise<unknown> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      // One request per HTTP call, so the id only has to be echoed back: no counter shared by the process.
      body: JSON.stringify({ jsonrpc: '2.0', id: randomInt(1, 2 ** 31), method, params }),
      signal: controller.signal,
    });
  } catch (err) {
    clearTimeout(timer);
    if (controller.signal.aborted) throw new OriginError(`origin did not answer ${method} within ${timeoutMs} ms`, 'timeout');
    throw new OriginError(`origin unreachable: ${(err as Error).message}`, 'unreachable');
  }
  let text: string;
  try {
    text = await res.text();
  } catch (err) {
    throw new OriginError(controller.signal.aborted ? `origin did not answer ${method} within ${timeoutMs} ms` : `origin response broken: ${(err as Error).message}`, controller.signal.aborted ? 'timeout' : 'unreachable');
  } finally {
    clearTimeout(timer);
  }
  let body: { result?: unknown; error?: { code: number; message: string; data?: unknown } } | undefined;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  // Bitcoin Core answers a failed call with HTTP 500 and a JSON-RPC error body: the node's
  // error is the useful part, so it wins over the status.
  if (body && typeof body === 'object' && body.error) {
    throw new OriginError(`origin error ${body.error.code}: ${body.error.message}`, 'rpc', body.error);
  }
  if (!res.ok) throw new OriginError(`origin answered HTTP ${res.status}`, 'http');
  if (body === undefined) throw new OriginError('origin answered something that is not JSON', 'invalid');
  if (!body || typeof body !== 'object' || !('result' in body)) throw new OriginError('origin answered without a result', 'invalid');
  return body.result;
}

export const KNOWN_NETWORK_NAMES = NETWORKS.map((n) => n.network);
