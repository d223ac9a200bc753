import type { ErrorObject } from 'ajv';
import type { Response } from 'express';
import { fieldErrorsOf } from '@chainpipe/contracts';
import type { RequestPart } from '@chainpipe/http';
import { KlineCode, sendKlineError } from './envelope';

const MESSAGES: Record<RequestPart, string> = {
  params: 'Invalid query params',
  path: 'Invalid path params',
  query: 'Invalid query params',
  body: 'Invalid request body',
};

/**
 * How the candlestick routes answer a request that fails its schema: 400 / 10001
 * `ValidationError` with the spec's `formErrors` and `fieldErrors`.
 */
export function klineInvalid(res: Response, errors: readonly ErrorObject[], part: RequestPart): void {
  sendKlineError(res, 400, KlineCode.validation, MESSAGES[part], fieldErrorsOf([...errors]));
}
