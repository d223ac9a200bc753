import type { Response } from 'express';
import { fieldErrorsOf, type Contracts } from '@chainpipe/contracts';
import { KlineCode, sendKlineError } from './envelope';

/**
 * Checks a value against its request schema; on failure answers 400 / 10001 with the spec's
 * `fieldErrors` and returns false.
 */
export function validOr400(contracts: Contracts, schemaId: string, value: unknown, res: Response, message: string): boolean {
  const validate = contracts.validator(schemaId);
  if (validate(value)) return true;
  sendKlineError(res, 400, KlineCode.validation, message, fieldErrorsOf(validate.errors));
  return false;
}
