/** An error with the HTTP status (and optional business code) a client should see. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code: number = status,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

export const badRequest = (message: string, details?: unknown) => new HttpError(400, message, 400, details);
export const unauthorized = (message = 'unauthorized') => new HttpError(401, message);
export const forbidden = (message = 'forbidden') => new HttpError(403, message);
export const notFound = (message = 'not found') => new HttpError(404, message);
export const serviceUnavailable = (message = 'service unavailable') => new HttpError(503, message);
