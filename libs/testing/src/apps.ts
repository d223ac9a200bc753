import { randomBytes } from 'node:crypto';
import { ApiKeyRepository, type ApiKeyRole, type Knex } from '@chainpipe/db';
import { generateApiKey } from '@chainpipe/http';
import { IntegratorRepository } from '@chainpipe/order-store';
import { testEnv } from './env';
import { freePort, spawnTs, waitReady, type RunningProcess } from './processes';

export interface TestApp {
  id: string;
  /** The whole key a client sends (`cpk_<key id>_<secret>`). */
  key: string;
  keyId: string;
}

/**
 * An application with one fresh API key, stored as `npm run admin -- app:create` stores it (a
 * customer's key unless `role` says `operator`, as `--role operator` does).
 */
export async function createAppWithKey(db: Knex, opts: { id?: string; name?: string; label?: string | null; role?: ApiKeyRole } = {}): Promise<TestApp> {
  const id = opts.id ?? `app-${randomBytes(4).toString('hex')}`;
  const repo = new ApiKeyRepository(db);
  await repo.createApp(id, opts.name ?? id);
  const k = generateApiKey();
  await repo.addKey(id, k.keyId, k.secretHash, opts.label ?? null, opts.role);
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

/** A running tx-gateway of a test and its WebSocket push URL. */
export interface TestTxGateway {
  proc: RunningProcess;
  wsUrl: string;
  /** Its ops server (/metrics, /readyz). */
  opsUrl: string;
}

/**
 * A tx-gateway process on the test's topics (`prefix`), Postgres and Redis (keys under the
 * prefix), its push group `<prefix>push`, ready; `env` adds or overrides settings.
 */
export async function startTxGateway(prefix: string, env: Record<string, string> = {}, opts: { readyTimeoutMs?: number } = {}): Promise<TestTxGateway> {
  const t = testEnv();
  const [port, ops] = await Promise.all([freePort(), freePort()]);
  const proc = spawnTs('apps/tx-gateway/src/main.ts', {
    KAFKA_BROKERS: t.kafkaBrokers.join(','),
    KAFKA_TOPIC_PREFIX: prefix,
    DATABASE_URL: t.databaseUrl,
    REDIS_URL: t.redisUrl,
    REDIS_KEY_PREFIX: `${prefix}redis:`,
    PORT: String(port),
    OPS_PORT: String(ops),
    WEBHOOK_SECRET_KEY: randomBytes(32).toString('hex'),
    TX_GATEWAY_PUSH_GROUP: `${prefix}push`,
    LOG_LEVEL: 'warn',
    ...env,
  });
  await waitReady(proc, ops, opts.readyTimeoutMs ?? 60_000);
  return { proc, wsUrl: `ws://127.0.0.1:${port}/tx/api/v1/transaction/ws`, opsUrl: `http://127.0.0.1:${ops}` };
}
