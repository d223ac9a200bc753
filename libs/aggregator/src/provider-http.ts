import { upstreamJson, UpstreamError, upstreamUrl } from '@chainpipe/upstreams';
import { ProviderError } from './adapter';

/**
 * One JSON call to a provider over the upstream core: base URL + path + query, the provider's
 * headers, a deadline combined with the caller's signal. Every failure is a ProviderError: a
 * non-2xx carries its status and the provider's own message text, and `kind` tells a timeout of
 * the provider's deadline from an unreachable provider or a bad answer. An answer that is JSON
 * but not an object is a ProviderError as well.
 */
type ProviderRequest = { baseUrl: string; path: string; query?: Record<string, string>; method?: 'GET' | 'POST'; headers?: Record<string, string>; body?: unknown; timeoutMs: number; signal?: AbortSignal };

export async function providerJson(provider: string, req: ProviderRequest): Promise<Record<string, unknown>> {
  const json = await providerAnswer(provider, req);
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw new ProviderError(provider, 'answered JSON that is not an object', 200, { kind: 'invalid' });
  return json as Record<string, unknown>;
}

/** The same for endpoints that answer a JSON array (THORNode's inbound_addresses). */
export async function providerJsonArray(provider: string, req: ProviderRequest): Promise<unknown[]> {
  const json = await providerAnswer(provider, req);
  if (!Array.isArray(json)) throw new ProviderError(provider, 'answered JSON that is not an array', 200, { kind: 'invalid' });
  return json;
}

async function providerAnswer(provider: string, req: ProviderRequest): Promise<unknown> {
  let json: unknown;
  try {
    json = await upstreamJson({
      url: upstreamUrl(req.baseUrl, req.path), query: req.query, method: req.method ?? 'GET', headers: req.headers, json: req.body, timeoutMs: req.timeoutMs, signal: req.signal,
    });
  } catch (err) {
    if (!(err instanceof UpstreamError)) throw err;
    throw new ProviderError(provider, err.message, err.status, { kind: err.kind, cause: err });
  }
  return json;
}
