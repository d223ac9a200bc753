import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { Registry } from 'prom-client';
import { Webhook } from 'standardwebhooks';
import { networkByName } from '@chainpipe/chains';
import { TOPICS, loadContracts, type TxPushMessage } from '@chainpipe/contracts';
import { ApiKeyRepository, createDb, type Knex } from '@chainpipe/db';
import { SecretBox, createLogger } from '@chainpipe/runtime';
import { ManualClock, topicMessage, WebhookReceiver, evmBlockItem, parseFixture, randomSuffix, rebaseBlock, testEnv } from '@chainpipe/testing';
import { GIVE_UP_AFTER_MS, WebhookDispatcher, postWebhook, webhookQueueMetrics, type SenderOptions } from '@chainpipe/webhooks';

type Json = any;

/** Transaction hashes of every body the receiver got, in order. */
const hashes = (receiver: WebhookReceiver): string[] => receiver.bodies<Json[]>().flatMap((b) => b.map((t) => t.txHash));

describe('webhook delivery (real Postgres, real HTTP receiver, injected clock)', function () {
  this.timeout(60_000);
  const env = testEnv();
  const contracts = loadContracts();
  const box = new SecretBox(randomBytes(32).toString('hex'));
  const sender: SenderOptions = { allowPrivate: true, connectTimeoutMs: 2_000, responseTimeoutMs: 3_000, maxResponseBytes: 1024 };
  let db: Knex;
  let receiver: WebhookReceiver;
  /** The injected clock; set when the suite starts (a receiver verifies timestamps within 5 minutes of real time). */
  let clock: ManualClock;
  const apps: string[] = [];
  const txs = (() => {
    const r = rebaseBlock('evm', evmBlockItem(), 3_000_000_000 + Math.floor(Math.random() * 1e9), randomSuffix());
    return parseFixture('evm', r.item, networkByName('ethereum-mainnet')!, r.height).transactions;
  })();
  let nextTx = 0;

  const dispatcher = () =>
    new WebhookDispatcher({
      db,
      send: (url, body, headers) => postWebhook(url, body, headers, sender),
      openSecret: (s) => box.open(s),
      clock,
      logger: createLogger({ name: 'webhooks-test', level: 'silent' }),
      registry: new Registry(),
    });
  const newApp = async (secret: string | null) => {
    const appId = `wh-${randomBytes(4).toString('hex')}`;
    await new ApiKeyRepository(db).createApp(appId, appId);
    await db('tx.app_configs').insert({ app_id: appId, enable_webhook: true, webhook_url: receiver.url, webhook_secret_enc: secret ? box.seal(secret) : null });
    apps.push(appId);
    return appId;
  };
  const pushes = (appId: string, n: number): TxPushMessage[] =>
    Array.from({ length: n }, () => {
      const tx = txs[nextTx++];
      return topicMessage(TOPICS.txPush, { message_id: randomBytes(16).toString('hex'), app_id: appId, tx_id: String(1_000_000 + nextTx), network: 'ethereum-mainnet', listen_address: [tx.sender!], is_reorg_resend: false, orphaned: false, ws: true, webhook: true, matched_at: clock.now(), tx });
    });
  const config = async (appId: string) => db('tx.app_configs').where({ app_id: appId }).first();
  const queue = async (appId: string) => db('tx.webhook_queue').where({ app_id: appId }).orderBy('id');

  before(async () => {
    clock = new ManualClock(Date.now());
    db = createDb({ url: env.databaseUrl, poolMax: 6 });
    receiver = new WebhookReceiver();
    await receiver.start();
  });
  after(async () => {
    await receiver.stop();
    await db('core.apps').whereIn('app_id', apps).del();
    await db.destroy();
  });
  beforeEach(() => {
    receiver.requests.length = 0;
    receiver.status = 200;
    receiver.delayMs = 0;
    receiver.maxInFlight = 0;
  });

  it('POSTs a bare array of TransactionResult with Sign and Standard Webhooks headers a standard library verifies', async () => {
    const secret = 'my shared secret';
    const appId = await newApp(secret);
    const batch = pushes(appId, 2);
    await dispatcher().handlePushes(batch);
    expect(receiver.requests).to.have.length(2);
    for (const [i, r] of receiver.requests.entries()) {
      expect(r.headers['content-type']).to.equal('application/json');
      expect(r.headers.sign).to.equal(secret);
      expect(r.headers['webhook-id']).to.equal(batch[i].message_id);
      // Verified with the `standardwebhooks` package, the configured secret as the raw key.
      const payload = new Webhook(secret, { format: 'raw' }).verify(r.body, r.headers as Record<string, string>) as Json[];
      expect(Array.isArray(payload)).to.equal(true);
      expect(contracts.validate('webhook/tx/transaction-batch', payload)).to.deep.equal({ ok: true });
      expect(payload[0].txHash).to.equal(batch[i].tx.tx_hash);
      expect(() => new Webhook('another secret', { format: 'raw' }).verify(r.body, r.headers as Record<string, string>)).to.throw();
    }
    const noSecret = await newApp(null);
    await dispatcher().handlePushes(pushes(noSecret, 1));
    expect(receiver.requests[2].headers.sign).to.equal('');
  });

  it('receiver down: batches queue in order, retries follow 1 s, 2 s, 4 s …; on recovery one POST drains the queue and the status is active again', async () => {
    const appId = await newApp('s');
    const d = dispatcher();
    receiver.status = 503;
    const first = pushes(appId, 3);
    await d.handlePushes(first);
    // The first POST failed: everything queued, in order; later matches go straight to the queue.
    expect(receiver.requests).to.have.length(1);
    const t0 = clock.now();
    let cfg = await config(appId);
    expect(cfg).to.include({ webhook_delivery_status: 'retrying', webhook_retrying_since: String(Math.floor(t0 / 1000)) });
    const later = pushes(appId, 2);
    await d.handlePushes(later);
    expect(receiver.requests).to.have.length(1);
    expect((await queue(appId)).map((r: Json) => r.payload.txHash)).to.deep.equal([...first, ...later].map((p) => p.tx.tx_hash));

    const attemptsAt: number[] = [];
    for (const step of [500, 500, 1000, 1000, 1000, 1000, 2000, 1000]) {
      await clock.advance(step);
      const before = receiver.requests.length;
      await d.drainDue();
      if (receiver.requests.length > before) attemptsAt.push(clock.now() - t0);
    }
    // Intervals after each failure: 1 s, 2 s, 4 s (t0+1 s, t0+3 s, t0+7 s).
    expect(attemptsAt).to.deep.equal([1000, 3000, 7000]);
    expect((await queue(appId))[0].next_attempt_at).to.equal(String(t0 + 15_000));
    // The queue as operators see it: at least these 5 waiting, the oldest since t0 or earlier.
    const registry = new Registry();
    const queueMetrics = webhookQueueMetrics({ db, registry, clock });
    await queueMetrics.refresh();
    const gauge = async (name: string) => (await registry.getSingleMetric(name)!.get()).values[0].value;
    expect(await gauge('chainpipe_webhook_queue_items')).to.be.at.least(5);
    expect(await gauge('chainpipe_webhook_queue_oldest_age_seconds')).to.be.at.least((clock.now() - t0) / 1000);

    receiver.status = 200;
    await clock.advance(t0 + 15_000 - clock.now());
    expect(await d.drainDue()).to.equal(5);
    const last = receiver.requests[receiver.requests.length - 1];
    expect((JSON.parse(last.body) as Json[]).map((t) => t.txHash)).to.deep.equal([...first, ...later].map((p) => p.tx.tx_hash));
    cfg = await config(appId);
    expect(cfg).to.include({ webhook_delivery_status: 'active', webhook_retrying_since: null });
    expect(await queue(appId)).to.deep.equal([]);
  });

  it('never recovers: disabled 36 h after the first failure; re-enabling resumes delivery of what was queued', async () => {
    const appId = await newApp('s');
    const d = dispatcher();
    receiver.status = 500;
    const batch = pushes(appId, 2);
    await d.handlePushes(batch);
    const t0 = clock.now();
    // Walk the schedule: whenever a batch is due, attempt it, until the give-up time passed.
    for (let i = 0; i < 60 && (await config(appId)).webhook_delivery_status !== 'disabled'; i++) {
      const [head] = await queue(appId);
      await clock.advance(Math.max(0, Number(head.next_attempt_at) - clock.now()));
      await d.drainDue();
    }
    const cfg = await config(appId);
    expect(cfg).to.include({ webhook_delivery_status: 'disabled', enable_webhook: false, webhook_last_failed_transaction_id: batch[0].tx_id, webhook_last_failure_reason: 'HTTP 500' });
    expect(clock.now() - t0).to.be.at.least(GIVE_UP_AFTER_MS);
    expect(clock.now() - t0).to.be.below(GIVE_UP_AFTER_MS + 36 * 3600 * 1000 + 1);
    // While disabled new matches are not queued, and the failed batch is kept.
    await d.handlePushes(pushes(appId, 1));
    expect((await queue(appId)).length).to.equal(2);

    receiver.status = 200;
    await db('tx.app_configs').where({ app_id: appId }).update({ enable_webhook: true });
    await d.drainDue();
    expect(hashes(receiver).slice(-2)).to.deep.equal(batch.map((p) => p.tx.tx_hash));
    expect(await config(appId)).to.include({ webhook_delivery_status: 'active', enable_webhook: true });
  });

  it('two dispatchers share the queue: an application is drained by one at a time (FOR UPDATE SKIP LOCKED)', async () => {
    const appId = await newApp('s');
    receiver.status = 500;
    await dispatcher().handlePushes(pushes(appId, 3));
    receiver.status = 200;
    receiver.delayMs = 300;
    await clock.advance(1000);
    const [a, b] = await Promise.all([dispatcher().drainApp(appId, false), dispatcher().drainApp(appId, false)]);
    expect([a, b].filter((r) => r === undefined)).to.have.length(1);
    expect(receiver.maxInFlight).to.equal(1);
    expect(receiver.requests.length).to.equal(2); // the failed live POST and one retry batch
    expect(await queue(appId)).to.deep.equal([]);
  });

  it('SSRF: connect-time check on the resolved address; https only unless private targets are allowed', async () => {
    const strict: SenderOptions = { ...sender, allowPrivate: false, lookup: async () => [{ address: '127.0.0.1', family: 4 }] };
    const rebinding = await postWebhook('https://hooks.example.com/x', '[]', {}, strict);
    expect(rebinding).to.deep.include({ ok: false });
    expect((rebinding as { error: string }).error).to.match(/no public address/);
    for (const addr of ['10.1.2.3', '169.254.169.254', '100.64.0.1', '::ffff:127.0.0.1', 'fe80::1']) {
      const r = await postWebhook('https://hooks.example.com/x', '[]', {}, { ...strict, lookup: async () => [{ address: addr, family: addr.includes(':') ? 6 : 4 }] });
      expect(r.ok, addr).to.equal(false);
    }
    expect(await postWebhook('https://127.0.0.1/x', '[]', {}, strict)).to.deep.include({ ok: false });
    expect(await postWebhook(receiver.url, '[]', {}, strict)).to.deep.equal({ ok: false, error: 'webhook URL must use https' });
    expect(receiver.requests).to.have.length(0);
    // Redirects are not followed: a 3xx is a failure.
    receiver.status = 302;
    expect(await postWebhook(receiver.url, '[]', {}, sender)).to.deep.include({ ok: false, status: 302 });
  });
});
