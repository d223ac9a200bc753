import { randomInt } from 'node:crypto';
import { OriginError } from '@chainpipe/chains';
import { NOT_JSON, parseJson, upstreamCall, UpstreamError } from './http';

/**
 * The chain JSON-RPC client. Which URL serves a network is chain configuration and stays in
 * `@chainpipe/chains` (`parseChainOrigins`, pure, read at boot); this side only talks to a URL.
 */

/**
 * The error type of a call to a chain origin lives with the origin configuration in
 * `@chainpipe/chains`, so the pure code that reads an origin's answers (tx-parsers' origin fetch)
 * names it without importing this client; it is re-exported here for the callers of the client.
 */
export { OriginError };

/**
 * A node's answer may be large (a verbose Bitcoin block runs to tens of MB): the default bound
 * only keeps a runaway answer from taking the process's memory. The RPC proxy passes a bound of
 * its own (RPC_PROXY_MAX_ANSWER_BYTES): what it forwards is a customer's call.
 */
export const JSON_RPC_MAX_ANSWER_BYTES = 128 * 1024 * 1024;

/**
 * One JSON-RPC 2.0 call over HTTP with a hard timeout. Resolves with `result`; rejects with an
 * OriginError saying what went wrong. Never hangs past `timeoutMs`.
 */
export async function jsonRpcCall(
  url: string,
  method: string,
  params: unknown[],
  timeoutMs: number,
  headers: Record<string, string> = {},
  maxBytes: number = JSON_RPC_MAX_ANSWER_BYTES,
): Promise<unknown> {
  let answer;
  try {
    answer = await upstreamCall({
      url,
      method: 'POST',
      headers,
      // One request per HTTP call, so the id only has to be echoed back: no counter shared by the process.
      json: { jsonrpc: '2.0', id: randomInt(1, 2 ** 31), method, params },
      timeoutMs,
      maxBytes,
    });
  } catch (err) {
    if (!(err instanceof UpstreamError)) throw err;
    if (err.kind === 'timeout') throw new OriginError(`origin did not answer ${method} within ${timeoutMs} ms`, 'timeout');
    if (err.kind === 'invalid') throw new OriginError(`origin ${err.message}`, 'invalid');
    // No caller signal here, so 'aborted' cannot come: it would be no answer all the same.
    throw new OriginError(`origin ${err.message}`, 'unreachable');
  }
  const parsed = parseJson(answer.text);
  const body = parsed === NOT_JSON ? undefined : (parsed as { result?: unknown; error?: { code: number; message: string; data?: unknown } } | null);
  // Bitcoin Core answers a failed call with HTTP 500 and a JSON-RPC error body: the node's
  // error is the useful part, so it wins over the status.
  if (body && typeof body === 'object' && body.error) {
    throw new OriginError(`origin error ${body.error.code}: ${body.error.message}`, 'rpc', body.error);
  }
  if (!answer.ok) throw new OriginError(`origin answered HTTP ${answer.status}`, 'http');
  if (parsed === NOT_JSON) throw new OriginError('origin answered something that is not JSON', 'invalid');
  if (!body || typeof body !== 'object' || !('result' in body)) throw new OriginError('origin answered without a result', 'invalid');
  return body.result;
}
