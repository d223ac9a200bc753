import { RetryableError, type ErrorCode } from '@chainpipe/runtime';
import { upstreamFailure, upstreamJson, UpstreamError, type UpstreamErrorKind } from '@chainpipe/upstreams';

/** The error code of each way a price source can fail (the poll retries every one of them). */
const CODE_OF: Record<UpstreamErrorKind, ErrorCode> = {
  unreachable: 'UPSTREAM_UNREACHABLE',
  timeout: 'UPSTREAM_UNREACHABLE',
  aborted: 'UPSTREAM_UNREACHABLE',
  http: 'UPSTREAM_HTTP',
  invalid: 'UPSTREAM_NOT_JSON',
};

/** GET of a JSON upstream with a deadline; any failure, a non-2xx or an unreadable answer is a RetryableError. */
export async function getJson(url: string, opts: { timeoutMs: number; headers?: Record<string, string> }): Promise<unknown> {
  try {
    return await upstreamJson({ url, headers: { accept: 'application/json', ...opts.headers }, timeoutMs: opts.timeoutMs });
  } catch (err) {
    if (!(err instanceof UpstreamError)) throw err;
    throw new RetryableError(upstreamFailure(err), CODE_OF[err.kind], { cause: err });
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
