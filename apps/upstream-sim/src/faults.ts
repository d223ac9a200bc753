import type { Request, RequestHandler, Response } from 'express';
import { sendError } from '@chainpipe/http';

/**
 * Origin failures on request, for other services' tests: the header `x-sim-fault` makes one
 * request of any upstream fail.
 * - `timeout`: the request is never answered; after the hold time the connection is closed
 *   without a response (bounded, so a client without a deadline of its own is not stuck forever);
 * - `error`: the upstream answers in its own protocol with an error (JSON-RPC error object,
 *   Tron `{"Error": ...}`), HTTP status as that upstream gives it;
 * - `http500`: HTTP 500 with a plain-text body, as a failing proxy or load balancer would.
 */
export const FAULT_HEADER = 'x-sim-fault';
export const FAULT_KINDS = ['timeout', 'error', 'http500'] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

export const SIMULATED_FAILURE = 'simulated upstream failure (x-sim-fault: error)';

/** Requests held by the `timeout` fault, so a shutdown can let go of them at once. */
export class HeldRequests {
  private readonly held = new Set<Request>();

  constructor(private readonly holdMs: number) {}

  get size(): number {
    return this.held.size;
  }

  hold(req: Request, res: Response): void {
    this.held.add(req);
    const timer = setTimeout(() => this.drop(req), this.holdMs);
    timer.unref();
    res.on('close', () => {
      clearTimeout(timer);
      this.held.delete(req);
    });
  }

  /** Closes every held connection without an answer. */
  releaseAll(): void {
    for (const req of [...this.held]) this.drop(req);
  }

  private drop(req: Request): void {
    this.held.delete(req);
    req.socket.destroy();
  }
}

export function faultOf(res: Response): FaultKind | undefined {
  return res.locals.simFault as FaultKind | undefined;
}

export function faultMiddleware(held: HeldRequests, onFault: (kind: FaultKind) => void): RequestHandler {
  return (req, res, next) => {
    const raw = req.header(FAULT_HEADER);
    if (raw === undefined) return next();
    const kind = raw.trim().toLowerCase();
    if (!(FAULT_KINDS as readonly string[]).includes(kind)) {
      return sendError(res, 400, `unknown ${FAULT_HEADER} ${JSON.stringify(raw.slice(0, 40))}: use one of ${FAULT_KINDS.join(', ')}`);
    }
    onFault(kind as FaultKind);
    if (kind === 'timeout') return held.hold(req, res);
    if (kind === 'http500') {
      res.status(500).type('text/plain').send('simulated upstream failure (x-sim-fault: http500)');
      return;
    }
    res.locals.simFault = kind;
    next();
  };
}
