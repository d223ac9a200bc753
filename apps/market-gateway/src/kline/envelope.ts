import type { Response } from 'express';
import { sendError, sendOk, type EnvelopeStyle } from '@chainpipe/http';

/** The candlestick service's business codes (spec, "Errors"). */
export const KlineCode = {
  validation: 10001,
  notFound: 10003,
  conflict: 10004,
  badRequest: 10005,
  unauthenticated: 20001,
  forbidden: 20002,
  poolNotFound: 60001,
  internal: 99001,
  upgradeRequired: 4000,
} as const;

const TYPES: Record<number, string> = {
  10001: 'ValidationError',
  10002: 'ValidationError',
  10003: 'NotFoundError',
  10004: 'ConflictError',
  10005: 'BadRequestError',
  20001: 'UnauthorizedError',
  20002: 'ForbiddenError',
  60001: 'NotFoundError',
  99001: 'InternalServerError',
  4000: 'BadRequestError',
};

/** HTTP errors that reach the envelope without a business code (auth, routing, body parsing, crashes). */
function fromStatus(status: number, message: string): { code: number; message: string; type: string } {
  if (status === 401 || status === 403) return { code: KlineCode.unauthenticated, message: 'Unauthorized', type: 'UnauthorizedError' };
  if (status === 404) return { code: KlineCode.notFound, message, type: 'NotFoundError' };
  if (status === 400) return { code: KlineCode.badRequest, message: message === 'invalid JSON' ? 'Invalid JSON' : message, type: 'BadRequestError' };
  if (status === 413) return { code: 413, message, type: 'PayloadTooLargeError' };
  // The spec answers a rate limit with 99001 (its body as for any internal error); HTTP 429 with
  // Retry-After tells clients and proxies to wait (docs/decisions.md, D181).
  if (status === 429) return { code: KlineCode.internal, message: 'Internal server error', type: 'InternalServerError' };
  if (status === 504) return { code: 504, message, type: 'GatewayTimeoutError' };
  if (status >= 500) return { code: KlineCode.internal, message: 'Internal server error', type: 'InternalServerError' };
  return { code: status, message, type: 'BadRequestError' };
}

/**
 * `{code: 0, message: "ok", data}`; failures `{code, message, error: {type, details?}}` with
 * `details` = `{formErrors, fieldErrors}` for validation errors (spec, "Candlestick service
 * envelopes").
 */
export const klineEnvelope: EnvelopeStyle = {
  name: 'kline',
  ok: (data, code, message) => ({ code, message, data }),
  error: (status, code, message, details) => {
    const e = code === status ? fromStatus(status, message) : { code, message, type: TYPES[code] ?? 'Error' };
    return { code: e.code, message: e.message, error: details === undefined ? { type: e.type } : { type: e.type, details } };
  },
  errorSchema: {
    type: 'object',
    required: ['code', 'message', 'error'],
    properties: {
      code: { type: 'integer' },
      message: { type: 'string' },
      error: {
        type: 'object',
        required: ['type'],
        properties: {
          type: { type: 'string', description: 'ValidationError, NotFoundError, ConflictError, BadRequestError, UnauthorizedError, InternalServerError …' },
          details: {
            type: 'object',
            description: 'validation errors: `formErrors` of the whole request, `fieldErrors` by field',
            properties: {
              formErrors: { type: 'array', items: { type: 'string' } },
              fieldErrors: { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } },
            },
          },
        },
      },
    },
  },
};

/** The auth scheme of the candlestick routes that need a key: `X-API-Key`, 401/403 `Unauthorized` (20001). */
export const KLINE_AUTH = 'klineApiKey';
/** The pools admin's scheme: an operator's key (D171); a customer's key is 403, code 20002 `Forbidden`. */
export const KLINE_OPERATOR_AUTH = 'klineOperatorKey';

export const KLINE_PREFIX = '/kline/api/v1';
/** Admin, debug and health endpoints of the candlestick service (spec, "Versioning"). */
export const KLINE_ADMIN_PREFIX = '/api/v1';

/** The live chart page and its scripts (`demo.routes.ts`). */
export const KLINE_DEMO_PREFIX = '/kline/demo';

export function klineEnvelopeFor(path: string): EnvelopeStyle | undefined {
  const p = path.toLowerCase();
  const under = (prefix: string) => p === prefix || p.startsWith(`${prefix}/`);
  return under(KLINE_PREFIX) || under(KLINE_ADMIN_PREFIX) || under(KLINE_DEMO_PREFIX) ? klineEnvelope : undefined;
}

export const sendKlineOk = (res: Response, data: unknown): void => sendOk(res, data, { message: 'ok' });

export function sendKlineError(res: Response, status: number, code: number, message: string, details?: unknown): void {
  sendError(res, status, message, { code, details });
}
