import type { Response } from 'express';

/**
 * Each service of the spec wraps responses its own way (`msg` vs `message`, `data` null vs ""
 * on errors, extra error objects). A style says how; the app picks one per path before anything
 * runs (`createHttpApp`'s `envelopeFor`), so every success and error of a route, including
 * auth failures, timeouts and body-parser errors, uses it.
 */
export interface EnvelopeStyle {
  name: string;
  ok(data: unknown, code: number, message: string): unknown;
  error(status: number, code: number, message: string, details?: unknown): unknown;
  /**
   * JSON Schema of an error body, for the API documents. Needed only when the style derives
   * fields from the code (the candlestick service's `error.type`): otherwise it is read off
   * `error` itself.
   */
  errorSchema?: Record<string, unknown>;
}

export const msgEnvelope: EnvelopeStyle = {
  name: 'msg',
  ok: (data, code, message) => ({ code, msg: message, data }),
  error: (_status, code, message) => ({ code, msg: message, data: null }),
};

export const messageEnvelope: EnvelopeStyle = {
  name: 'message',
  ok: (data, code, message) => ({ code, message, data }),
  error: (_status, code, message) => ({ code, message, data: null }),
};

const ENVELOPE_KEY = 'envelope';

export function envelopeOf(res: Response): EnvelopeStyle {
  return (res.locals[ENVELOPE_KEY] as EnvelopeStyle | undefined) ?? msgEnvelope;
}

export function setEnvelope(res: Response, style: EnvelopeStyle): void {
  res.locals[ENVELOPE_KEY] = style;
}

const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * Sends JSON text as Express's `res.json` would (status, `application/json; charset=utf-8`,
 * `Content-Length`, no body for HEAD), without its per-request work: settings look-ups,
 * content-type parsing and, past 1,000 characters, a copy of the body into a Buffer. A
 * conditional request (`If-None-Match`, `If-Modified-Since`), a status without a body (204, 205,
 * 304) and a response whose content type or transfer encoding a handler already set go through
 * Express, which keeps its rules for them.
 */
export function sendJsonText(res: Response, status: number, text: string): void {
  const req = res.req;
  const headers = req.headers;
  const bodiless = status === 204 || status === 205 || status === 304;
  if (bodiless || headers['if-none-match'] !== undefined || headers['if-modified-since'] !== undefined || res.hasHeader('content-type') || res.hasHeader('transfer-encoding')) {
    res.status(status).type('json').send(text);
    return;
  }
  res.statusCode = status;
  res.setHeader('Content-Type', JSON_TYPE);
  if (req.method === 'HEAD') {
    res.setHeader('Content-Length', Buffer.byteLength(text, 'utf8'));
    res.end();
    return;
  }
  // Node writes `Content-Length` itself for a body given whole to `end`, from the byte length it
  // counts there: counting it here as well walked the text twice (5,000 candles are ~0.5 MB).
  res.end(text, 'utf8');
}

/** A unique string a style places where `data` goes, to cut its rendered envelope in two. */
const DATA_MARK = '\u0000chainpipe-envelope-data\u0000';
const DATA_MARK_JSON = JSON.stringify(DATA_MARK);

/**
 * The JSON text of a style's success envelope around `data`, with the text before and after
 * `data` rendered once per style, code and message: a request then stringifies its data only.
 * A style that does not place `data` as given (one that reshapes it) is rendered whole.
 */
type Fragments = readonly [string, string] | null;
/** By style, then code, then message: no key is built per request. */
const okFragments = new WeakMap<EnvelopeStyle, Map<number, Map<string, Fragments>>>();
/** Calls of one style kept at most (codes and messages come from the code, so few). */
const MAX_FRAGMENTS = 1000;

function okText(style: EnvelopeStyle, data: unknown, code: number, message: string): string {
  let byCode = okFragments.get(style);
  if (!byCode) okFragments.set(style, (byCode = new Map()));
  let byMessage = byCode.get(code);
  let parts = byMessage?.get(message);
  if (parts === undefined) {
    const whole = JSON.stringify(style.ok(DATA_MARK, code, message));
    const at = whole.indexOf(DATA_MARK_JSON);
    parts = at >= 0 && whole.indexOf(DATA_MARK_JSON, at + 1) < 0 ? [whole.slice(0, at), whole.slice(at + DATA_MARK_JSON.length)] : null;
    if (!byMessage && byCode.size < MAX_FRAGMENTS) byCode.set(code, (byMessage = new Map()));
    if (byMessage && byMessage.size < MAX_FRAGMENTS) byMessage.set(message, parts);
  }
  const rendered = data === undefined ? undefined : JSON.stringify(data);
  // undefined data leaves its key out of the envelope: render that the plain way.
  if (parts === null || rendered === undefined) return JSON.stringify(style.ok(data, code, message));
  return parts[0] + rendered + parts[1];
}

/** Sends a success body in the router's style. */
export function sendOk(res: Response, data: unknown, opts: { code?: number; message?: string; status?: number } = {}): void {
  if (res.headersSent) return;
  sendJsonText(res, opts.status ?? 200, okText(envelopeOf(res), data, opts.code ?? 0, opts.message ?? 'success'));
}

/** Sends an error body in the router's style; `code` defaults to the HTTP status. */
export function sendError(res: Response, status: number, message: string, opts: { code?: number; details?: unknown } = {}): void {
  if (res.headersSent) return;
  sendJsonText(res, status, JSON.stringify(envelopeOf(res).error(status, opts.code ?? status, message, opts.details)));
}
