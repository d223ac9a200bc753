import { ProviderError } from './adapter';

/**
 * One JSON call to a provider: base URL + path + query, the provider's headers, a deadline
 * combined with the caller's signal. A non-2xx answer, or one that is not a JSON object, is a
 * ProviderError carrying the provider's own `message` or `error` text.
 */
export async function providerJson(
  provider: string,
  req: { baseUrl: string; path: string; query?: Record<string, string>; method?: 'GET' | 'POST'; headers?: Record<string, string>; body?: unknown; timeoutMs: number; signal?: AbortSignal },
): Promise<Record<string, unknown>> {
  const url = new URL(req.baseUrl.replace(/\/$/, '') + req.path);
  for (const [k, v] of Object.entries(req.query ?? {})) url.searchParams.set(k, v);
  const timeout = AbortSignal.timeout(req.timeoutMs);
  const res = await fetch(url, {
    method: req.method ?? 'GET',
    headers: { ...req.headers, ...(req.body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: req.body === undefined ? undefined : JSON.stringify(req.body),
    signal: req.signal ? AbortSignal.any([req.signal, timeout]) : timeout,
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new ProviderError(provider, `HTTP ${res.status}, not JSON`, res.status);
  }
  if (!res.ok || typeof json !== 'object' || json === null || Array.isArray(json)) {
    const said = (json as { message?: unknown; error?: unknown } | null)?.message ?? (json as { error?: unknown } | null)?.error;
    throw new ProviderError(provider, `HTTP ${res.status}: ${typeof said === 'string' ? said : 'error'}`, res.status);
  }
  return json as Record<string, unknown>;
}
