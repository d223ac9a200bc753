import type { RequestHandler } from 'express';
import { formatErrors, type Contracts } from '@chainpipe/contracts';
import { sendError } from './envelope';

/** Validates `req.body` against a schema of `schemas/`; 400 naming the fields otherwise. */
export function validateBody(contracts: Contracts, schemaId: string): RequestHandler {
  const validate = contracts.validator(schemaId);
  return (req, res, next) => {
    if (validate(req.body)) return next();
    sendError(res, 400, formatErrors(validate.errors));
  };
}
