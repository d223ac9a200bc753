import { randomBytes } from 'node:crypto';
import { ApiKeyRepository, type Knex } from '@chainpipe/db';
import { generateApiKey } from '@chainpipe/http';
import { IntegratorRepository } from '@chainpipe/order-store';

export interface TestApp {
  id: string;
  /** The whole key a client sends (`cpk_<key id>_<secret>`). */
  key: string;
  keyId: string;
}

/** An application with one fresh API key, stored as `npm run admin -- app:create` stores it. */
export async function createAppWithKey(db: Knex, opts: { id?: string; name?: string; label?: string | null } = {}): Promise<TestApp> {
  const id = opts.id ?? `app-${randomBytes(4).toString('hex')}`;
  const repo = new ApiKeyRepository(db);
  await repo.createApp(id, opts.name ?? id);
  const k = generateApiKey();
  await repo.addKey(id, k.keyId, k.secretHash, opts.label ?? null);
  return { id, key: k.token, keyId: k.keyId };
}

/** A fresh integrator key of the aggregator API (commission `feeRateBp` basis points). */
export async function addIntegratorKey(db: Knex, integratorId: string, feeRateBp: number): Promise<string> {
  const k = generateApiKey();
  await new IntegratorRepository(db).addKey(integratorId, { keyId: k.keyId, secretHash: k.secretHash, feeRateBp, label: null });
  return k.token;
}

/** An integrator with one key, as `npm run admin -- integrator:create --fee-rate` makes it. */
export async function createIntegratorWithKey(db: Knex, opts: { name: string; feeRateBp: number }): Promise<{ id: string; key: string }> {
  const id = await new IntegratorRepository(db).createIntegrator(opts.name);
  return { id, key: await addIntegratorKey(db, id, opts.feeRateBp) };
}
