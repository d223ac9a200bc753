import { expect } from 'chai';
import type { Request, Response } from 'express';
import { createKeyResolver, generateApiKey, hashSecret, messageEnvelope, operatorKeyAuth, parseApiKey, safeEqual, secretMatches, setEnvelope, type StoredKey } from '@chainpipe/http';
import { ManualClock } from '@chainpipe/testing';

describe('API keys', () => {
  it('generates keys whose secret is only stored as a hash', () => {
    const k = generateApiKey();
    const parsed = parseApiKey(k.token)!;
    expect(parsed.keyId).to.equal(k.keyId);
    expect(k.secretHash).to.equal(hashSecret(parsed.secret));
    expect(k.secretHash).to.not.contain(parsed.secret);
    expect(secretMatches(parsed.secret, k.secretHash)).to.equal(true);
    expect(secretMatches(parsed.secret + 'x', k.secretHash)).to.equal(false);
    expect(generateApiKey().token).to.not.equal(k.token);
  });

  it('rejects malformed tokens', () => {
    for (const t of ['', 'cpk_', 'cpk_short_x', 'Bearer abc', `cpk_${'a'.repeat(16)}_${'b'.repeat(42)}`, `xx_${'a'.repeat(16)}_${'b'.repeat(43)}`]) {
      expect(parseApiKey(t), t).to.equal(undefined);
    }
  });

  it('resolves active keys, refuses revoked ones and wrong secrets, and caches lookups', async () => {
    const k = generateApiKey();
    let lookups = 0;
    const clock = new ManualClock(0);
    const store = new Map<string, StoredKey>([[k.keyId, { appId: 'app-1', keyId: k.keyId, secretHash: k.secretHash, active: true }]]);
    const resolve = createKeyResolver(async (id) => (lookups++, store.get(id)), { cacheTtlMs: 1000, clock });
    // A stored key that names no role is a customer's.
    expect(await resolve(k.token)).to.deep.equal({ appId: 'app-1', keyId: k.keyId, role: 'customer' });
    expect(await resolve(k.token)).to.deep.equal({ appId: 'app-1', keyId: k.keyId, role: 'customer' });
    expect(lookups).to.equal(1);
    const wrong = k.token.slice(0, -1) + (k.token.endsWith('A') ? 'B' : 'A');
    expect(await resolve(wrong)).to.equal(undefined);
    store.set(k.keyId, { ...store.get(k.keyId)!, active: false });
    await clock.advance(2000);
    expect(await resolve(k.token)).to.equal(undefined);
    expect(await resolve('nonsense')).to.equal(undefined);
    expect(lookups).to.equal(2);
  });

  it('looks a key in use up again before its entry expires, so a revocation lands within the TTL without a request waiting, and shares concurrent look-ups', async () => {
    const k = generateApiKey();
    let lookups = 0;
    const clock = new ManualClock(0);
    const store = new Map<string, StoredKey>([[k.keyId, { appId: 'app-1', keyId: k.keyId, secretHash: k.secretHash, active: true }]]);
    const tick = () => new Promise<void>((r) => setImmediate(r));
    const resolve = createKeyResolver(
      async (id) => {
        lookups++;
        await tick();
        return store.get(id);
      },
      { cacheTtlMs: 1000, clock },
    );
    const principal = { appId: 'app-1', keyId: k.keyId, role: 'customer' };
    expect(await Promise.all([resolve(k.token), resolve(k.token), resolve(k.token)])).to.deep.equal([principal, principal, principal]);
    expect(lookups).to.equal(1);
    store.set(k.keyId, { ...store.get(k.keyId)!, active: false });
    await clock.advance(400);
    expect(await resolve(k.token)).to.deep.equal(principal); // young entry: no look-up
    expect(lookups).to.equal(1);
    await clock.advance(200);
    // Past half the TTL: still answered from the entry, while a look-up runs behind it.
    expect(await resolve(k.token)).to.deep.equal(principal);
    expect(lookups).to.equal(2);
    await tick();
    await tick();
    expect(await resolve(k.token)).to.equal(undefined); // revoked, 600 ms after: within the 1 s TTL
    expect(lookups).to.equal(2);
  });

  it('compares shared secrets of any length', () => {
    expect(safeEqual('abc', 'abc')).to.equal(true);
    expect(safeEqual('abc', 'abcd')).to.equal(false);
    expect(safeEqual('', 'x')).to.equal(false);
  });

  it('operator routes: no key 401, unknown 403, a customer\'s key 403 with the service\'s text, an operator\'s key passes', async () => {
    const customer = generateApiKey();
    const operator = generateApiKey();
    const store = new Map<string, StoredKey>([
      [customer.keyId, { appId: 'shop', keyId: customer.keyId, secretHash: customer.secretHash, active: true, role: 'customer' }],
      [operator.keyId, { appId: 'platform', keyId: operator.keyId, secretHash: operator.secretHash, active: true, role: 'operator' }],
    ]);
    const auth = operatorKeyAuth(createKeyResolver(async (id) => store.get(id), { cacheTtlMs: 0 }), { forbidden: { message: 'operator key required' } });
    const attempt = (key: string | undefined) =>
      new Promise<{ status?: number; body?: unknown; passed: boolean }>((resolve, reject) => {
        const req = { method: 'GET', headers: {}, header: (name: string) => (name.toLowerCase() === 'x-api-key' ? key : undefined) };
        const res = {
          req,
          locals: {},
          headersSent: false,
          statusCode: 200,
          hasHeader: () => false,
          setHeader: () => undefined,
          end: (text: string) => resolve({ status: res.statusCode, body: JSON.parse(text), passed: false }),
        };
        setEnvelope(res as unknown as Response, messageEnvelope);
        void auth.handler(req as unknown as Request, res as unknown as Response, (err?: unknown) => (err ? reject(err) : resolve({ passed: true })));
      });
    expect(await attempt(undefined)).to.deep.include({ status: 401, passed: false });
    expect(await attempt(generateApiKey().token)).to.deep.include({ status: 403, passed: false });
    expect(await attempt(customer.token)).to.deep.equal({ status: 403, body: { code: 403, message: 'operator key required', data: null }, passed: false });
    expect(await attempt(operator.token)).to.deep.equal({ passed: true });
  });
});
