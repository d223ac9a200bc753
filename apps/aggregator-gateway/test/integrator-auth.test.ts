import { expect } from 'chai';
import { generateApiKey } from '@chainpipe/http';
import type { StoredIntegratorKey } from '@chainpipe/order-store';
import { resolveIntegratorKey } from '../src/orders/integrator-auth';

describe('integrator key resolution', () => {
  const key = generateApiKey();
  const stored = (over: Partial<StoredIntegratorKey> = {}): StoredIntegratorKey => ({
    keyId: key.keyId, integratorId: '7', secretHash: key.secretHash, feeRateBp: 25, keyEnabled: true, integratorActive: true, ...over,
  });
  const lookupOf = (row: StoredIntegratorKey | undefined) => async (id: string) => (id === key.keyId ? row : undefined);

  it('a valid key of an active integrator names it and its rate', async () => {
    expect(await resolveIntegratorKey(key.token, lookupOf(stored()))).to.deep.equal({ kind: 'ok', integratorId: '7', keyId: key.keyId, feeRateBp: 25 });
  });

  it('no key, malformed, unknown, wrong secret or disabled key, and a disabled integrator', async () => {
    expect(await resolveIntegratorKey(undefined, lookupOf(stored()))).to.deep.equal({ kind: 'none' });
    expect(await resolveIntegratorKey('  ', lookupOf(stored()))).to.deep.equal({ kind: 'none' });
    expect(await resolveIntegratorKey('not-a-key', lookupOf(stored()))).to.deep.equal({ kind: 'invalid' });
    expect(await resolveIntegratorKey(generateApiKey().token, lookupOf(stored()))).to.deep.equal({ kind: 'invalid' });
    const wrongSecret = `cpk_${key.keyId}_${generateApiKey().token.split('_').slice(2).join('_')}`;
    expect(await resolveIntegratorKey(wrongSecret, lookupOf(stored()))).to.deep.equal({ kind: 'invalid' });
    expect(await resolveIntegratorKey(key.token, lookupOf(stored({ keyEnabled: false })))).to.deep.equal({ kind: 'invalid' });
    expect(await resolveIntegratorKey(key.token, lookupOf(stored({ integratorActive: false })))).to.deep.equal({ kind: 'integrator_disabled', integratorId: '7' });
    // a disabled key of a disabled integrator is first of all an invalid key (401 on refunds)
    expect(await resolveIntegratorKey(key.token, lookupOf(stored({ keyEnabled: false, integratorActive: false })))).to.deep.equal({ kind: 'invalid' });
  });
});
