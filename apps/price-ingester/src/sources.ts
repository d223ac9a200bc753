import { RetryableError } from '@chainpipe/runtime';

/** GET of a JSON upstream with a deadline; any non-2xx or unreadable answer is a RetryableError. */
export async function getJson(url: string, opts: { timeoutMs: number; headers?: Record<string, string> }): Promise<unknown> {
  let res: Response;
  try {
    res = await fetch(url, { headers: { accept: 'application/json', ...opts.headers }, signal: AbortSignal.timeout(opts.timeoutMs) });
  } catch (err) {
    throw new RetryableError(`upstream unreachable: ${(err as Error).name === 'TimeoutError' ? `no answer in ${opts.timeoutMs} ms` : (err as Error).message}`, 'UPSTREAM_UNREACHABLE');
  }
  const text = await res.text();
  if (!res.ok) throw new RetryableError(`upstream answered HTTP ${res.status}: ${text.slice(0, 200)}`, 'UPSTREAM_HTTP');
  try {
    return JSON.parse(text);
  } catch {
    throw new RetryableError('upstream answered something that is not JSON', 'UPSTREAM_NOT_JSON');
  }
}

/** The request URL of CoinMarketCap's quotes/latest for some ids, in USD. */
export function quotesUrl(base: string, ids: readonly string[]): string {
  return `${base.replace(/\/$/, '')}/v2/cryptocurrency/quotes/latest?id=${ids.map(encodeURIComponent).join(',')}&convert=USD`;
}

/** The request URL of Open Exchange Rates' latest.json for some codes, base USD. */
export function fiatRatesUrl(base: string, codes: readonly string[], appId: string): string {
  const q = new URLSearchParams({ base: 'USD', symbols: codes.join(',') });
  if (appId) q.set('app_id', appId);
  return `${base.replace(/\/$/, '')}/api/latest.json?${q.toString()}`;
}
