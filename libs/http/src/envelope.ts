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

/** Sends a success body in the router's style. */
export function sendOk(res: Response, data: unknown, opts: { code?: number; message?: string; status?: number } = {}): void {
  if (res.headersSent) return;
  res.status(opts.status ?? 200).json(envelopeOf(res).ok(data, opts.code ?? 0, opts.message ?? 'success'));
}

/** Sends an error body in the router's style; `code` defaults to the HTTP status. */
export function sendError(res: Response, status: number, message: string, opts: { code?: number; details?: unknown } = {}): void {
  if (res.headersSent) return;
  res.status(status).json(envelopeOf(res).error(status, opts.code ?? status, message, opts.details));
}
