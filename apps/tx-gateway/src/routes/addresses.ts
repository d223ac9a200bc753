import express, { type Router } from 'express';
import type { TxGatewayDeps } from '../deps';

/** Placeholder until this route group is written. */
export function addressesRoutes(_deps: TxGatewayDeps): Router {
  return express.Router();
}
