import type { Response } from 'express';
import { sendError, type EnvelopeStyle } from '@chainpipe/http';

export const PRICE_PREFIX = '/price/api/v1';

/** `{code, msg, data}`; `data` is an empty string on errors (spec, "Price service response envelope"). */
export const priceEnvelope: EnvelopeStyle = {
  name: 'price',
  ok: (data, code, message) => ({ code, msg: message, data }),
  error: (_status, code, message) => ({ code, msg: message, data: '' }),
};

export function priceEnvelopeFor(path: string): EnvelopeStyle | undefined {
  const p = path.toLowerCase();
  return p === PRICE_PREFIX || p.startsWith(`${PRICE_PREFIX}/`) ? priceEnvelope : undefined;
}

/** The price service's business codes (spec, "Errors"). */
export const PriceCode = {
  missingParameter: 20001,
  chainNotFound: 20002,
  badBatchBody: 20003,
  poolFetchFailed: 30001,
} as const;

/** 20001 and 20003 are HTTP 400 (docs/decisions.md#d6); 20002 is HTTP 200 (spec). */
export function sendPriceError(res: Response, status: number, code: number, msg: string): void {
  sendError(res, status, msg, { code });
}

/** The auth scheme of every price route (the module's `ApiRoutes`): `X-API-Key`, 401 `unauthorized` / 403 `forbidden`. */
export const PRICE_AUTH = 'priceApiKey';
