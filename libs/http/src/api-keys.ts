import { createHash, hash, randomBytes, timingSafeEqual } from 'node:crypto';
import { type Clock, systemClock } from '@chainpipe/runtime';
import type { RequestHandler } from 'express';
import type { ApiAuth } from './api-routes';
import { sendError } from './envelope';

/**
 * API keys look like `cpk_<key id>_<secret>`. The key id is public (it finds the row); only
 * sha256(secret) is stored. Secrets are 32 random bytes, so a fast hash is enough: there is
 * nothing to brute-force. Comparison of the hashes is constant-time.
 */
export interface GeneratedApiKey {
  keyId: string;
  /** The full key, shown once to the operator, never stored. */
  token: string;
  secretHash: string;
}

const TOKEN_RE = /^cpk_([a-z0-9]{16})_([A-Za-z0-9_-]{43})$/;

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

export function generateApiKey(prefix = 'cpk'): GeneratedApiKey {
  const keyId = randomBytes(10).toString('hex').slice(0, 16);
  const secret = randomBytes(32).toString('base64url');
  return { keyId, token: `${prefix}_${keyId}_${secret}`, secretHash: hashSecret(secret) };
}

export function parseApiKey(token: string): { keyId: string; secret: string } | undefined {
  const m = TOKEN_RE.exec(token.trim());
  return m ? { keyId: m[1], secret: m[2] } : undefined;
}

/** Constant-time check of a presented secret against the stored hash (hex, or its bytes). */
export function secretMatches(secret: string, storedHash: string | Buffer): boolean {
  const a = hash('sha256', secret, 'buffer');
  const b = typeof storedHash === 'string' ? Buffer.from(storedHash, 'hex') : storedHash;
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Constant-time equality of two strings of any length (e.g. a shared stream secret). */
export function safeEqual(a: string, b: string): boolean {
  // Hashing first gives equal-length buffers, so neither length nor content leaks through timing.
  const ha = createHash('sha256').update(a).digest();
  const hb = createHash('sha256').update(b).digest();
  return timingSafeEqual(ha, hb);
}

/** What a key may do (D171): `customer` its own application's data; `operator` also the resources every application shares. */
export type KeyRole = 'customer' | 'operator';

export interface Principal {
  appId: string;
  keyId: string;
  /** Absent: a customer's key. */
  role?: KeyRole;
}

export interface StoredKey {
  appId: string;
  keyId: string;
  secretHash: string;
  /** False when the key was revoked or its application disabled. */
  active: boolean;
  /** Absent: a customer's key. */
  role?: KeyRole;
}

/** Finds a key by id; the store never sees the secret. */
export type KeyLookup = (keyId: string) => Promise<StoredKey | undefined>;

/** A cached look-up: the stored key with its hash's bytes, and when the look-up began. */
interface CachedKey {
  at: number;
  key: (StoredKey & { hashBytes: Buffer }) | undefined;
}

/**
 * Resolves a presented key to its application, with a short cache so that a busy client does
 * not cost a database round trip per request. Revocation takes effect within `cacheTtlMs`: an
 * entry answers only while younger than that, counted from when its look-up began. A key in use
 * is looked up again in the background once half that age, so its requests do not wait for the
 * database; concurrent requests of a key not cached share one look-up. Only the stored hash is
 * cached, never a presented secret: each request hashes its secret and compares in constant time.
 */
export function createKeyResolver(lookup: KeyLookup, opts: { cacheTtlMs?: number; clock?: Pick<Clock, 'now'> } = {}) {
  const ttl = opts.cacheTtlMs ?? 10_000;
  const clock = opts.clock ?? systemClock;
  const cache = new Map<string, CachedKey>();
  const pending = new Map<string, Promise<CachedKey>>();
  const load = (keyId: string): Promise<CachedKey> => {
    let running = pending.get(keyId);
    if (!running) {
      const at = clock.now();
      running = lookup(keyId)
        .then((key): CachedKey => {
          const entry = { at, key: key && { ...key, hashBytes: Buffer.from(key.secretHash, 'hex') } };
          if (cache.size > 10_000) cache.clear();
          cache.set(keyId, entry);
          return entry;
        })
        .finally(() => pending.delete(keyId));
      pending.set(keyId, running);
    }
    return running;
  };
  return async (token: string): Promise<Principal | undefined> => {
    const parsed = parseApiKey(token);
    if (!parsed) return undefined;
    let entry = cache.get(parsed.keyId);
    const age = entry ? clock.now() - entry.at : Infinity;
    if (age >= ttl) entry = await load(parsed.keyId);
    else if (age >= ttl / 2 && !pending.has(parsed.keyId)) void load(parsed.keyId).catch(() => undefined);
    const key = entry!.key;
    if (!key || !key.active || !secretMatches(parsed.secret, key.hashBytes)) return undefined;
    return { appId: key.appId, keyId: key.keyId, role: key.role ?? 'customer' };
  };
}

export const PRINCIPAL = 'principal';

/**
 * `X-API-Key` authentication: missing key → 401, unknown, revoked or disabled → 403. The
 * application is then `res.locals.principal`. `messages` gives a service's own error texts.
 */
export function requireApiKey(
  resolve: (token: string) => Promise<Principal | undefined>,
  messages: { missing: string; invalid: string } = { missing: 'missing X-API-Key', invalid: 'invalid API key' },
): RequestHandler {
  return async (req, res, next) => {
    const token = req.header('x-api-key');
    if (!token) return sendError(res, 401, messages.missing);
    try {
      const principal = await resolve(token);
      if (!principal) return sendError(res, 403, messages.invalid);
      res.locals[PRINCIPAL] = principal;
      next();
    } catch (err) {
      next(err);
    }
  };
}

/** `X-API-Key` authentication as an `ApiRoutes` auth scheme: the middleware and how documents describe it. */
export function apiKeyAuth(resolve: (token: string) => Promise<Principal | undefined>, messages?: { missing: string; invalid: string }): ApiAuth {
  const said = (text: string | undefined) => (text ? ` (message \`${text}\`)` : '');
  return {
    handler: requireApiKey(resolve, messages),
    scheme: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'the application key (`cpk_<key id>_<secret>`), created with `npm run admin -- app:create`' },
    errors: {
      401: `missing X-API-Key${said(messages?.missing)}`,
      403: `invalid API key (unknown, revoked, or its application disabled)${said(messages?.invalid)}`,
    },
    keyOf: (res) => (res.locals[PRINCIPAL] as Principal | undefined)?.keyId,
  };
}

/**
 * An operator's `X-API-Key` (D171): authenticated as `apiKeyAuth` does (401 missing, 403 unknown),
 * then refused with 403 and `forbidden` (the service's own text and code) unless the key's role
 * is `operator`. For the routes that change what every application shares.
 */
export function operatorKeyAuth(
  resolve: (token: string) => Promise<Principal | undefined>,
  opts: { messages?: { missing: string; invalid: string }; forbidden: { message: string; code?: number } },
): ApiAuth {
  const customer = apiKeyAuth(resolve, opts.messages);
  const authenticate = customer.handler;
  const handler: RequestHandler = (req, res, next) => {
    void authenticate(req, res, (err?: unknown) => {
      if (err) return next(err);
      const principal = res.locals[PRINCIPAL] as Principal;
      if (principal.role !== 'operator') return sendError(res, 403, opts.forbidden.message, { code: opts.forbidden.code });
      next();
    });
  };
  return {
    ...customer,
    handler,
    scheme: { ...customer.scheme, description: 'an operator key (`cpk_<key id>_<secret>`), created with `npm run admin -- key:create --role operator`' },
    errors: { ...customer.errors, 403: `${customer.errors[403]}, or not an operator key (message \`${opts.forbidden.message}\`)` },
  };
}
