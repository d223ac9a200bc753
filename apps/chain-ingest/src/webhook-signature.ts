import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

/**
 * QuickNode Streams sign each webhook delivery (D173): `X-QN-Signature` is the hex HMAC-SHA256,
 * keyed with the stream's security token, of `X-QN-Nonce` + `X-QN-Timestamp` + the body as sent
 * before compression (a gzip delivery is signed over the inflated JSON). Pure: no I/O, the
 * clock comes in.
 */

export type SignatureCheck = { ok: true } | { ok: false; reason: 'unsigned' | 'stale' | 'invalid' };

export interface QuickNodeVerifier {
  securityToken: string;
  /** How far `X-QN-Timestamp` may be from now (a captured delivery replayed later is refused); 0: any. */
  maxAgeSeconds: number;
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  const value = Array.isArray(v) ? v[0] : v;
  return value === undefined || value === '' ? undefined : value;
}

/** The signature QuickNode sends for `body` (the inflated bytes) with this nonce and timestamp. */
export function quickNodeSignature(securityToken: string, nonce: string, timestamp: string, body: Buffer): string {
  return createHmac('sha256', securityToken).update(nonce, 'utf8').update(timestamp, 'utf8').update(body).digest('hex');
}

export function verifyQuickNodeDelivery(verifier: QuickNodeVerifier, headers: IncomingHttpHeaders, body: Buffer, nowMs: number): SignatureCheck {
  const nonce = header(headers, 'x-qn-nonce');
  const timestamp = header(headers, 'x-qn-timestamp');
  const signature = header(headers, 'x-qn-signature');
  if (!nonce || !timestamp || !signature) return { ok: false, reason: 'unsigned' };
  if (verifier.maxAgeSeconds > 0) {
    if (!/^\d{1,16}$/.test(timestamp)) return { ok: false, reason: 'invalid' };
    // Seconds, as QuickNode sends it; a millisecond value is read as such.
    const n = Number(timestamp);
    const atMs = n > 1e11 ? n : n * 1000;
    if (Math.abs(nowMs - atMs) > verifier.maxAgeSeconds * 1000) return { ok: false, reason: 'stale' };
  }
  const expected = Buffer.from(quickNodeSignature(verifier.securityToken, nonce, timestamp, body), 'hex');
  const presented = /^[0-9a-fA-F]{64}$/.test(signature) ? Buffer.from(signature, 'hex') : Buffer.alloc(0);
  return presented.length === expected.length && timingSafeEqual(presented, expected) ? { ok: true } : { ok: false, reason: 'invalid' };
}
