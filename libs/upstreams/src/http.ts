import { request, type Dispatcher } from 'undici';

/**
 * The one HTTP call of every third-party upstream (chain nodes, market data, price sources, swap
 * providers): a deadline that covers the whole answer, body included, combined with the caller's
 * own signal; an answer of bounded size; and one error type whose `kind` says what went wrong,
 * so each caller maps failures to its own codes in one switch instead of re-reading fetch's
 * assorted exceptions.
 */

/**
 * - unreachable: no connection, or the connection broke before the answer was whole
 * - timeout: the deadline passed before the answer was whole
 * - aborted: the caller's signal fired first (the caller gave up; nothing is wrong upstream)
 * - http: a non-2xx status (`status`, and the upstream's own text in `upstreamMessage`)
 * - invalid: an answer that cannot be used (not JSON, or larger than the limit)
 */
export type UpstreamErrorKind = 'unreachable' | 'timeout' | 'aborted' | 'http' | 'invalid';

/**
 * A failed upstream call. The message reads after the upstream's name ("origin answered HTTP
 * 429", "thorchain did not answer within 5000 ms") and never includes the URL: a provider key
 * may be part of it.
 */
export class UpstreamError extends Error {
  readonly status?: number;
  /** What the upstream said about the failure: the message field of a JSON body, or the start of a text one. */
  readonly upstreamMessage?: string;

  constructor(message: string, readonly kind: UpstreamErrorKind, details: { status?: number; upstreamMessage?: string; cause?: unknown } = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = 'UpstreamError';
    this.status = details.status;
    this.upstreamMessage = details.upstreamMessage;
  }
}

/** Whether the upstream answered `status` (a 404 is often an answer to pass on, not a failure). */
export function isUpstreamStatus(err: unknown, status: number): err is UpstreamError {
  return err instanceof UpstreamError && err.kind === 'http' && err.status === status;
}

/** A failed call in words for a log line or an error of the caller's: "upstream answered HTTP 429: …". */
export function upstreamFailure(err: unknown): string {
  if (err instanceof UpstreamError) return `upstream ${err.message}`;
  return err instanceof Error ? err.message : String(err);
}

export interface UpstreamRequest {
  /** Absolute URL; `query` pairs are set on it (replacing a pair of the same name). */
  url: string | URL;
  query?: Record<string, string>;
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  headers?: Record<string, string>;
  /** Sent as JSON, with content-type application/json (a caller's own content-type wins). */
  json?: unknown;
  /** The whole call, answer body included, ends by then. */
  timeoutMs: number;
  /** The caller's own signal (a client that left, a deadline of its own): the call ends when it fires. */
  signal?: AbortSignal;
  /** Larger answers fail as `invalid` without being read further (default 16 MiB). */
  maxBytes?: number;
}

export interface UpstreamAnswer {
  status: number;
  ok: boolean;
  text: string;
}

export const DEFAULT_MAX_ANSWER_BYTES = 16 * 1024 * 1024;

/**
 * What every call says unless its caller says otherwise: `fetch` sent an `accept` and a
 * `user-agent` of its own, and some APIs refuse a request without a user agent. No
 * `accept-encoding`: answers come uncompressed, as there is nothing to gain on these sizes.
 */
const DEFAULT_HEADERS: Readonly<Record<string, string>> = { accept: '*/*', 'user-agent': 'chainpipe' };
/** A JSON body's content type (a caller's own wins). */
const JSON_BODY: Readonly<Record<string, string>> = { 'content-type': 'application/json' };

/** `base` + `path` as one URL, whether or not `base` ends with a slash (`base` may carry a path of its own). */
export function upstreamUrl(base: string, path: string): URL {
  return new URL(base.replace(/\/+$/, '') + path);
}

/**
 * One HTTP call, answered with any status: rejects only when no whole answer came (unreachable,
 * timeout, aborted) or it was too large (invalid). For callers that read the status themselves;
 * `upstreamJson` is the usual entry.
 *
 * The call goes through undici's `request` (the client behind Node's `fetch`, without the WHATWG
 * Request, Headers, Response and stream objects `fetch` builds around each call): a quote stream
 * asks five providers at once, and those objects and the promise races a `fetch` needs to keep
 * its deadline over the body were most of what a call cost here. The pooled keep-alive
 * connections are the same (undici's global agent).
 */
export async function upstreamCall(req: UpstreamRequest): Promise<UpstreamAnswer> {
  const url = new URL(req.url);
  if (req.query) for (const [k, v] of Object.entries(req.query)) url.searchParams.set(k, v);
  const maxBytes = req.maxBytes ?? DEFAULT_MAX_ANSWER_BYTES;
  if (req.signal?.aborted) throw abandoned(req.signal.reason);

  // One signal for the deadline and the caller: undici ends the call on it, the body's read
  // included (the body stream is destroyed), so nothing outlives the deadline.
  const controller = new AbortController();
  let timedOut = false;
  let answered = false;
  const timer = setTimeout(() => {
    if (controller.signal.aborted) return;
    timedOut = true;
    controller.abort();
  }, req.timeoutMs);
  const onCallerAbort = () => controller.abort();
  req.signal?.addEventListener('abort', onCallerAbort, { once: true });

  try {
    const json = req.json === undefined ? undefined : JSON.stringify(req.json);
    const res = await request(url, {
      method: req.method ?? (json === undefined ? 'GET' : 'POST'),
      headers: { ...DEFAULT_HEADERS, ...(json === undefined ? undefined : JSON_BODY), ...req.headers },
      body: json,
      signal: controller.signal,
    });
    const text = await readBounded(res, maxBytes);
    answered = true;
    return { status: res.statusCode, ok: res.statusCode >= 200 && res.statusCode < 300, text };
  } catch (err) {
    if (err instanceof UpstreamError) throw err;
    if (timedOut) throw new UpstreamError(`did not answer within ${req.timeoutMs} ms`, 'timeout', { cause: err });
    if (req.signal?.aborted) throw abandoned(err);
    throw new UpstreamError(`unreachable: ${transportFailure(err)}`, 'unreachable', { cause: err });
  } finally {
    clearTimeout(timer);
    req.signal?.removeEventListener('abort', onCallerAbort);
    // A body left unread (an error on the way) would hold the connection until the deadline. A
    // whole answer holds nothing: no abort then (each one builds an AbortError with its stack).
    if (!answered && !controller.signal.aborted) controller.abort();
  }
}

/**
 * One call whose answer must be a 2xx with a JSON body: resolves with the parsed body. A non-2xx
 * status is `http` whatever the body (with the upstream's own text when it gave one), a 2xx that
 * is not JSON is `invalid`.
 */
export async function upstreamJson(req: UpstreamRequest): Promise<unknown> {
  const answer = await upstreamCall(req);
  const body = parseJson(answer.text);
  if (!answer.ok) {
    const said = upstreamMessageOf(body, answer.text);
    throw new UpstreamError(`answered HTTP ${answer.status}${said ? `: ${said}` : ''}`, 'http', { status: answer.status, upstreamMessage: said });
  }
  if (body === NOT_JSON) throw new UpstreamError(`answered HTTP ${answer.status} with something that is not JSON`, 'invalid', { status: answer.status });
  return body;
}

/** What `parseJson` answers for a text that is not JSON (undefined is no JSON value, but reads like "absent"). */
export const NOT_JSON: unique symbol = Symbol('not JSON');

export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return NOT_JSON;
  }
}

const MAX_UPSTREAM_MESSAGE = 200;

/**
 * The upstream's own words about a failure, in the shapes the upstreams use: `message` or
 * `error` (a text, or an object with a `message`: JSON-RPC, many REST APIs), CoinMarketCap's
 * `status.error_message`, JSON:API's `errors[0].detail` or `title` (GeckoTerminal); otherwise
 * the start of a body that is not JSON. Undefined when it said nothing usable.
 */
export function upstreamMessageOf(body: unknown, text: string): string | undefined {
  const str = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v.trim().slice(0, MAX_UPSTREAM_MESSAGE) : undefined);
  if (body === NOT_JSON) return str(text);
  if (typeof body !== 'object' || body === null) return undefined;
  const b = body as Record<string, unknown>;
  const obj = (v: unknown): Record<string, unknown> => (typeof v === 'object' && v !== null ? (v as Record<string, unknown>) : {});
  const firstError = Array.isArray(b.errors) ? obj(b.errors[0]) : {};
  return str(b.message) ?? str(b.error) ?? str(obj(b.error).message) ?? str(obj(b.status).error_message) ?? str(firstError.detail) ?? str(firstError.title);
}

function abandoned(cause: unknown): UpstreamError {
  return new UpstreamError('call abandoned by the caller', 'aborted', { cause });
}

/** The socket's error in words: undici's own, or its cause where one wraps it (an AggregateError, for several addresses, has only a code). */
function transportFailure(err: unknown): string {
  const cause = (err as { cause?: { message?: unknown; code?: unknown } } | undefined)?.cause;
  if (cause && typeof cause.message === 'string' && cause.message) return cause.message;
  if (cause && typeof cause.code === 'string') return cause.code;
  return err instanceof Error ? err.message : String(err);
}

/**
 * The answer's body as text, at most `maxBytes`. A declared length bounds the body by itself (the
 * HTTP framing ends it there), so such a body is read whole at once; a chunked one is counted as
 * it comes. An early end (too large) destroys the body, which closes its connection.
 */
async function readBounded(res: Dispatcher.ResponseData, maxBytes: number): Promise<string> {
  const tooLarge = () => {
    res.body.destroy();
    return new UpstreamError(`answered more than ${maxBytes} bytes`, 'invalid', { status: res.statusCode });
  };
  const length = res.headers['content-length'];
  if (typeof length === 'string') {
    if (Number(length) > maxBytes) throw tooLarge();
    return res.body.text();
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res.body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) throw tooLarge();
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size).toString('utf8');
}
