import type { Request } from 'express';
import { parseApiKey, secretMatches } from '@chainpipe/http';
import type { Knex } from '@chainpipe/db';
import { IntegratorRepository, type StoredIntegratorKey } from '@chainpipe/order-store';

/**
 * Integrator keys: the same `cpk_<key id>_<secret>` format, sha256 storage and constant-time
 * comparison as application keys (`@chainpipe/http`), looked up in agg.integrator_keys on every
 * request (no cache: a deleted or disabled key stops at once, as the spec says).
 */
export type IntegratorIdentity =
  | { kind: 'none' }
  /** Unknown key, wrong secret, disabled or deleted key. */
  | { kind: 'invalid' }
  | { kind: 'integrator_disabled'; integratorId: string }
  | { kind: 'ok'; integratorId: string; keyId: string; feeRateBp: number };

export type IntegratorKeyLookup = (keyId: string) => Promise<StoredIntegratorKey | undefined>;

export async function resolveIntegratorKey(token: string | undefined, lookup: IntegratorKeyLookup): Promise<IntegratorIdentity> {
  if (token === undefined || token.trim() === '') return { kind: 'none' };
  const parsed = parseApiKey(token);
  if (!parsed) return { kind: 'invalid' };
  const key = await lookup(parsed.keyId);
  if (!key || !secretMatches(parsed.secret, key.secretHash) || !key.keyEnabled) return { kind: 'invalid' };
  if (!key.integratorActive) return { kind: 'integrator_disabled', integratorId: key.integratorId };
  return { kind: 'ok', integratorId: key.integratorId, keyId: key.keyId, feeRateBp: key.feeRateBp };
}

/** Order creation: `X-Integrator-Api-Key` (recommended) or `Authorization: ApiKey <key>`. */
export function creationKey(req: Request): string | undefined {
  const header = req.header('x-integrator-api-key');
  if (header !== undefined) return header;
  const m = /^ApiKey\s+(\S+)\s*$/i.exec(req.header('authorization') ?? '');
  return m ? m[1] : undefined;
}

/** Refunds and order reads: `X-Integrator-Api-Key` only. */
export function refundKey(req: Request): string | undefined {
  return req.header('x-integrator-api-key');
}

/** The quote stream's optional key: its commission rate (bp) when it is a valid key of an active integrator, else null. */
export function integratorKeyRate(db: Knex): (req: Request) => Promise<number | null> {
  const repo = new IntegratorRepository(db);
  return async (req) => {
    const identity = await resolveIntegratorKey(creationKey(req), (keyId) => repo.findKey(keyId));
    return identity.kind === 'ok' ? identity.feeRateBp : null;
  };
}
