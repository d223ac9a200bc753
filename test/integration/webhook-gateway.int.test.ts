import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { TOPICS } from '@chainpipe/contracts';
import { createDb, type Knex } from '@chainpipe/db';
import { toTransactionResult } from '@chainpipe/tx-records';
import { TestCertificateAuthority, createAppWithKey, createRegistryTopics, documentAssertion, freePort, spawnTs, stopProcess, testEnv, uniquePrefix, waitFor, waitReady, WebhookReceiver, type RunningProcess } from '@chainpipe/testing';
import { ERC20_TRANSFER } from '../../apps/tx-gateway/src/api-examples';

type Json = any;

const SECRET_KEY = randomBytes(32).toString('hex');
const REQUEST_TIMEOUT_MS = 3_000;

/**
 * The webhook side of tx-gateway's configuration API with webhook-dispatcher running beside it
 * (real processes, Postgres, Kafka, HTTP receivers): a configuration write that switches the
 * webhook on again or replaces its URL makes the queue due at once; the manual retry answers
 * within the request deadline whatever the receiver does; every POST shows in
 * GET /tx/api/v1/app/webhook/attempts.
 */

/**
 * "At once" next to a retry an hour away: the bound of a delivery that must not wait for its
 * backoff, wide enough for the scheduler's 200 ms passes on a loaded machine (integration files
 * run two at a time beside the fault suites).
 */
const AT_ONCE_MS = 15_000;
describe('webhook delivery through the configuration API (tx-gateway and webhook-dispatcher processes)', function () {
  this.timeout(120_000);
  const env = testEnv();
  let db: Knex;
  let gatewayBase = '';
  const procs: RunningProcess[] = [];
  // Receivers as deployed: https under a host name, their CA trusted by both processes through
  // WEBHOOK_CA_FILE (the manual retry POSTs from tx-gateway).
  const ca = new TestCertificateAuthority();
  const caDir = mkdtempSync(path.join(tmpdir(), 'webhook-gateway-ca-'));
  const caFile = path.join(caDir, 'ca.pem');
  writeFileSync(caFile, ca.cert);
  const live = new WebhookReceiver({ tls: ca.issue(['localhost']), host: 'localhost' });
  const dead = new WebhookReceiver({ tls: ca.issue(['localhost']), host: 'localhost' });
  const matchesDocument = documentAssertion(() => gatewayBase);

  async function call(method: string, path: string, key: string, body?: unknown): Promise<{ status: number; body: Json; ms: number }> {
    const started = Date.now();
    const res = await fetch(gatewayBase + path, { method, headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    const parsed = JSON.parse(text) as Json;
    await matchesDocument(method, path, res.status, res.headers.get('content-type'), parsed, text);
    return { status: res.status, body: parsed, ms: Date.now() - started };
  }

  /** An application with `n` transactions queued after failures, its next retry an hour away. */
  async function backedOffApp(label: string, n: number, url: string): Promise<{ appId: string; key: string; hashes: string[] }> {
    const app = await createAppWithKey(db, { id: `${env.runId}-${label}-${randomBytes(3).toString('hex')}` });
    const now = Date.now();
    const hashes = Array.from({ length: n }, () => `0x${randomBytes(32).toString('hex')}`);
    expect((await call('POST', '/tx/api/v1/app/config', app.key, { enable_webhook: true, webhook_url: url, webhook_secret: 's' })).status).to.equal(200);
    // Stored transactions, as the matcher's pushes name them (the attempts list reads their hashes by id).
    const stored = (await db('tx.transactions')
      .insert(hashes.map((h) => ({ chain_type: 'ethereum', chain_id: 1, network: 'ethereum-mainnet', tx_hash: h, tx_status: 'success', record: JSON.stringify({ ...ERC20_TRANSFER, tx_hash: h }) })))
      .returning('id')) as Array<{ id: string }>;
    storedTxIds.push(...stored.map((r) => r.id));
    await db('tx.webhook_queue').insert(
      hashes.map((h, i) => ({ app_id: app.id, tx_id: stored[i].id, tx_status: 'success', message_id: randomBytes(16).toString('hex'), payload: JSON.stringify(toTransactionResult({ ...ERC20_TRANSFER, tx_hash: h })), attempts: 12, first_failed_at: now - 7_200_000 })),
    );
    await db('tx.app_configs').where({ app_id: app.id }).update({ webhook_delivery_status: 'retrying', webhook_retrying_since: Math.floor(now / 1000) - 7_200, webhook_next_attempt_at: now + 3_600_000 });
    return { appId: app.id, key: app.key, hashes };
  }

  const storedTxIds: string[] = [];
  const receivedHashes = (r: WebhookReceiver) => r.bodies<Json[]>().flatMap((b) => b.map((t) => t.txHash));

  before(async function () {
    this.timeout(120_000);
    db = createDb({ url: env.databaseUrl, poolMax: 3 });
    await live.start();
    await dead.start();
    dead.status = 503;
    const prefix = uniquePrefix('whg');
    await createRegistryTopics(prefix, [TOPICS.txPush, TOPICS.addressesChanges]);
    const common = { DATABASE_URL: env.databaseUrl, KAFKA_BROKERS: env.kafkaBrokers.join(','), KAFKA_TOPIC_PREFIX: prefix, WEBHOOK_SECRET_KEY: SECRET_KEY, ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true', WEBHOOK_CA_FILE: caFile, LOG_LEVEL: 'warn' };
    const [port, gwOps, dOps] = await Promise.all([freePort(), freePort(), freePort()]);
    const gateway = spawnTs('apps/tx-gateway/src/main.ts', { ...common, REDIS_URL: env.redisUrl, PORT: String(port), OPS_PORT: String(gwOps), REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS), WS_PUSH_ENABLED: 'false' });
    const dispatcher = spawnTs('apps/webhook-dispatcher/src/main.ts', { ...common, OPS_PORT: String(dOps), WEBHOOK_DISPATCHER_GROUP: `${prefix}dispatcher`, WEBHOOK_SCHEDULER_INTERVAL_MS: '200' });
    procs.push(gateway, dispatcher);
    await Promise.all([waitReady(gateway, gwOps, 90_000), waitReady(dispatcher, dOps, 90_000)]);
    gatewayBase = `http://127.0.0.1:${port}`;
  });

  after(async () => {
    for (const p of procs) await stopProcess(p);
    await live.stop();
    await dead.stop();
    rmSync(caDir, { recursive: true, force: true });
    if (storedTxIds.length) await db('tx.transactions').whereIn('id', storedTxIds).del();
    await db?.destroy();
  });

  it('a replaced webhook_url makes an hour-away retry due at once: the queue reaches the new receiver in order', async () => {
    const app = await backedOffApp('url', 120, dead.url);
    const before = (await call('GET', '/tx/api/v1/app/webhook/retry/status', app.key)).body.data;
    expect(before.next_retry_at - Date.now() / 1000).to.be.above(3_000);
    const replaced = Date.now();
    expect((await call('PUT', '/tx/api/v1/app/config', app.key, { webhook_url: live.url })).status).to.equal(200);
    await waitFor(() => receivedHashes(live).filter((h) => app.hashes.includes(h)).length === app.hashes.length, { timeoutMs: AT_ONCE_MS, what: 'the queue delivered to the new URL' });
    expect(receivedHashes(live).filter((h) => app.hashes.includes(h))).to.deep.equal(app.hashes);
    expect(live.requests.at(-1)!.at - replaced).to.be.below(AT_ONCE_MS);
    await waitFor(async () => (await call('GET', '/tx/api/v1/app/webhook/retry/status', app.key)).body.data.webhook_delivery_status === 'active', { timeoutMs: AT_ONCE_MS, what: 'active again' });
  });

  it('enable_webhook set again after the disable: at once retrying, then the kept batch is delivered', async () => {
    const app = await backedOffApp('reenable', 3, live.url);
    await db('tx.app_configs').where({ app_id: app.appId }).update({ webhook_delivery_status: 'disabled', enable_webhook: false, webhook_next_attempt_at: null, webhook_last_failure_reason: 'HTTP 503' });
    expect((await call('PUT', '/tx/api/v1/app/config', app.key, { enable_webhook: true })).status).to.equal(200);
    // Read right after the write, before any scheduler pass could have run.
    const status = (await call('GET', '/tx/api/v1/app/webhook/retry/status', app.key)).body.data;
    expect(status).to.include({ enable_webhook: true, webhook_delivery_status: 'retrying', pending: 3 });
    expect(status.next_retry_at).to.be.at.most(Math.ceil(Date.now() / 1000));
    await waitFor(() => app.hashes.every((h) => receivedHashes(live).includes(h)), { timeoutMs: AT_ONCE_MS, what: 'the kept batch delivered' });
    expect(receivedHashes(live).filter((h) => app.hashes.includes(h))).to.deep.equal(app.hashes);
  });

  it('a PUT or POST that changes nothing restarts no clock: the hour-away retry and each transaction\'s attempts stay; a changed secret resumes at once', async () => {
    const app = await backedOffApp('same', 2, dead.url);
    const state = async () => ({
      next: (await call('GET', '/tx/api/v1/app/webhook/retry/status', app.key)).body.data.next_retry_at,
      rows: (await db('tx.webhook_queue').where({ app_id: app.appId }).orderBy('id')).map((r: Json) => [r.attempts, r.first_failed_at]),
    });
    const before = await state();
    expect(before.next - Date.now() / 1000).to.be.above(3_000);
    for (const body of [{ webhook_url: dead.url }, { enable_webhook: true, is_active: true }, { webhook_secret: 's' }]) {
      expect((await call('PUT', '/tx/api/v1/app/config', app.key, body)).status).to.equal(200);
      expect(await state(), JSON.stringify(body)).to.deep.equal(before);
    }
    // POST replaces the whole configuration: the same one again changes nothing either.
    expect((await call('POST', '/tx/api/v1/app/config', app.key, { enable_webhook: true, webhook_url: dead.url, webhook_secret: 's' })).status).to.equal(200);
    expect(await state()).to.deep.equal(before);
    // Another secret is another target: due at once, each transaction's clock counted afresh.
    expect((await call('PUT', '/tx/api/v1/app/config', app.key, { webhook_secret: 'rotated' })).status).to.equal(200);
    const after = await state();
    expect(after.next).to.be.at.most(Math.ceil(Date.now() / 1000));
  });

  it('switching the webhook off parks the queue: no retry time, nothing sent, nothing dropped', async () => {
    const app = await backedOffApp('off', 2, live.url);
    expect((await call('PUT', '/tx/api/v1/app/config', app.key, { enable_webhook: false })).status).to.equal(200);
    expect((await call('GET', '/tx/api/v1/app/webhook/retry/status', app.key)).body.data).to.include({ pending: 2, next_retry_at: null });
  });

  it('POST /app/webhook/retry answers within the request deadline while the receiver is slow; the scheduler is left the rest', async () => {
    const slow = new WebhookReceiver();
    await slow.start();
    try {
      slow.delayMs = REQUEST_TIMEOUT_MS + 2_000;
      const app = await backedOffApp('manual', 5, slow.url);
      const r = await call('POST', '/tx/api/v1/app/webhook/retry', app.key);
      expect(r.status).to.equal(200);
      expect(r.ms).to.be.below(REQUEST_TIMEOUT_MS);
      expect(r.body.data).to.deep.include({ code: 0, message: 'success' });
      expect(r.body.data.data).to.include({ attempted: 5, delivered: 0, failed: 0, finalFailed: false, pending: 5 });
      // The POST that was running goes on and is recorded as delivered.
      await waitFor(async () => (await db('tx.webhook_queue').where({ app_id: app.appId })).length === 0, { timeoutMs: 10_000, what: 'the slow POST recorded' });
      expect(slow.requests).to.have.length(1);
    } finally {
      await slow.stop();
    }
  });

  it('GET /app/webhook/attempts lists every POST newest first with its outcome, paged by cursor; bad paging is 400', async () => {
    const app = await backedOffApp('attempts', 2, dead.url);
    const failed = await call('POST', '/tx/api/v1/app/webhook/retry', app.key);
    expect(failed.body.data.data).to.include({ attempted: 2, failed: 2 });
    expect((await call('PUT', '/tx/api/v1/app/config', app.key, { webhook_url: live.url })).status).to.equal(200);
    await waitFor(async () => (await db('tx.webhook_queue').where({ app_id: app.appId })).length === 0, { timeoutMs: AT_ONCE_MS, what: 'delivered to the new URL' });

    const page = await call('GET', '/tx/api/v1/app/webhook/attempts', app.key);
    expect(page.status).to.equal(200);
    const items = page.body.data.items as Json[];
    expect(items.map((a) => [a.path, a.transactions, a.delivered, a.status_code, a.error])).to.deep.equal([
      ['retry', 2, true, 200, null],
      ['retry', 2, false, 503, 'HTTP 503'],
    ]);
    // The failure scheduled the next retry 2^12 s later (the 13th failure), in Unix seconds.
    expect(items[1].next_retry_at - Math.floor(Date.parse(items[1].attempted_at) / 1000)).to.be.within(4_095, 4_097);
    expect(items[0].next_retry_at).to.equal(null);
    expect(page.body.data.next_cursor).to.equal(null);
    // Each attempt tells what it sent: the transactions (body order) and the POST's webhook-id,
    // as the receiver got it.
    for (const item of items) expect(item.tx_hashes).to.deep.equal(app.hashes);
    const received = live.requests.find((r) => (JSON.parse(r.body) as Json[]).some((t) => t.txHash === app.hashes[0]))!;
    expect(items[0].webhook_id).to.equal(received.headers['webhook-id']);
    expect(items[1].webhook_id).to.be.a('string').and.have.length.above(0);
    // Filtered by outcome and by a transaction the POST carried.
    const list = async (q: string) => ((await call('GET', `/tx/api/v1/app/webhook/attempts?${q}`, app.key)).body.data.items as Json[]).map((a) => a.id);
    expect(await list('outcome=failed')).to.deep.equal([items[1].id]);
    expect(await list('outcome=delivered')).to.deep.equal([items[0].id]);
    expect(await list(`tx_hash=${app.hashes[1]}`)).to.deep.equal(items.map((a) => a.id));
    expect(await list(`tx_hash=${app.hashes[1]}&outcome=failed&limit=1`)).to.deep.equal([items[1].id]);
    expect(await list(`tx_hash=0x${'0'.repeat(64)}`)).to.deep.equal([]);

    const first = (await call('GET', '/tx/api/v1/app/webhook/attempts?limit=1', app.key)).body.data;
    expect(first.items.map((a: Json) => a.id)).to.deep.equal([items[0].id]);
    expect(first.next_cursor).to.equal(items[0].id);
    const second = (await call('GET', `/tx/api/v1/app/webhook/attempts?limit=1&cursor=${first.next_cursor}`, app.key)).body.data;
    expect(second.items.map((a: Json) => a.id)).to.deep.equal([items[1].id]);
    // Another application sees none of them.
    const other = await createAppWithKey(db, { id: `${env.runId}-other-${randomBytes(3).toString('hex')}` });
    expect((await call('GET', '/tx/api/v1/app/webhook/attempts', other.key)).body.data).to.deep.equal({ items: [], next_cursor: null });
    for (const bad of ['limit=0', 'limit=101', 'limit=x', 'cursor=-1', 'cursor=abc', 'other=1', 'outcome=ok', 'tx_hash=', `tx_hash=${'a'.repeat(201)}`]) {
      const r = await call('GET', `/tx/api/v1/app/webhook/attempts?${bad}`, app.key);
      expect(r.status, bad).to.equal(400);
      expect(r.body).to.include({ code: 400, data: null });
    }
  });
});
