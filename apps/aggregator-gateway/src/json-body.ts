import express, { type RequestHandler } from 'express';
import { sendError } from '@chainpipe/http';

/**
 * The JSON body parser of the gateway's route modules (their `ApiRoutes` `jsonBody`): any content
 * type is read as JSON, and a malformed body is the spec's 400 `invalid request body`.
 */
export function gatewayJsonBody(limitBytes: number): RequestHandler {
  const json = express.json({ limit: limitBytes, strict: false, type: () => true });
  return (req, res, next) =>
    json(req, res, (err?: unknown) => {
      if ((err as { type?: string } | undefined)?.type === 'entity.parse.failed') return sendError(res, 400, 'invalid request body');
      next(err);
    });
}
