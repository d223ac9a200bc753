import { expect } from 'chai';
import { createKeyResolver, generateApiKey, hashSecret, parseApiKey, safeEqual, secretMatches, type StoredKey } from '@chainpipe/http';
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
    expect(await resolve(k.token)).to.deep.equal({ appId: 'app-1', keyId: k.keyId });
    expect(await resolve(k.token)).to.deep.equal({ appId: 'app-1', keyId: k.keyId });
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
    const principal = { appId: 'app-1', keyId: k.keyId };
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
});
