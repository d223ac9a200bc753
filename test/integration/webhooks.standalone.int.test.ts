import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { Registry } from 'prom-client';
import { Webhook } from 'standardwebhooks';
import { networkByName } from '@chainpipe/chains';
import { TOPICS, loadContracts, type TxPushMessage } from '@chainpipe/contracts';
import { ApiKeyRepository, createDb, type Knex } from '@chainpipe/db';
import { SecretBox, createLogger } from '@chainpipe/runtime';
import { ManualClock, TestCertificateAuthority, topicMessage, waitFor, WebhookReceiver, evmBlockItem, parseFixture, randomSuffix, rebaseBlock, testEnv } from '@chainpipe/testing';
import { GIVE_UP_AFTER_MS, WebhookDispatcher, batchId, postWebhook, resumeWebhookQueue, webhookQueueMetrics, type SenderOptions } from '@chainpipe/webhooks';

type Json = any;

/** Transaction hashes of every body the receiver got, in order. */
const hashes = (receiver: WebhookReceiver): string[] => receiver.bodies<Json[]>().flatMap((b) => b.map((t) => t.txHash));

describe('webhook delivery (real Postgres, real HTTP receiver, injected clock)', function () {
  this.timeout(60_000);
  const env = testEnv();
  const contracts = loadContracts();
  const box = new SecretBox(randomBytes(32).toString('hex'));
  // The shared receiver serves https under `localhost` with a certificate of a CA made here,
  // which the sender trusts as WEBHOOK_CA_FILE makes it: every POST to it goes through the
  // resolver and TLS. (Private targets allowed: it is on this machine.)
  const ca = new TestCertificateAuthority();
  const sender: SenderOptions = { allowPrivate: true, connectTimeoutMs: 2_000, responseTimeoutMs: 3_000, maxResponseBytes: 1024, extraCa: ca.cert };
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

  /** Dispatchers of the running test: closed after it (each live path pins a connection until then, as in a process). */
  const made: WebhookDispatcher[] = [];
  const dispatcher = (opts: { liveHoldMs?: number; callWaitMs?: number; batchSize?: number } = {}) => {
    const d = new WebhookDispatcher({
      db,
      send: (url, body, headers) => postWebhook(url, body, headers, sender),
      openSecret: (s) => box.open(s),
      clock,
      logger: createLogger({ name: 'webhooks-test', level: 'silent' }),
      registry: new Registry(),
      ...opts,
    });
    made.push(d);
    return d;
  };
  const newApp = async (secret: string | null) => {
    const appId = `wh-${randomBytes(4).toString('hex')}`;
    await new ApiKeyRepository(db).createApp(appId, appId);
    await db('tx.app_configs').insert({ app_id: appId, enable_webhook: true, webhook_url: receiver.url, webhook_secret_enc: secret ? box.seal(secret) : null });
    apps.push(appId);
    return appId;
  };
  const pushes = (appId: string, n: number): TxPushMessage[] =>
    Array.from({ length: n }, () => {
      // Past the fixture's transactions they repeat under fresh hashes.
      const base = txs[nextTx % txs.length];
      const tx = nextTx++ < txs.length ? base : { ...base, tx_hash: `0x${randomBytes(32).toString('hex')}` };
      return topicMessage(TOPICS.txPush, { message_id: randomBytes(16).toString('hex'), app_id: appId, tx_id: String(1_000_000 + nextTx), network: 'ethereum-mainnet', listen_address: [tx.sender!], is_reorg_resend: false, orphaned: false, ws: true, webhook: true, matched_at: clock.now(), tx });
    });
  const config = async (appId: string) => db('tx.app_configs').where({ app_id: appId }).first();
  const queue = async (appId: string) => db('tx.webhook_queue').where({ app_id: appId }).orderBy('id');

  before(async () => {
    clock = new ManualClock(Date.now());
    db = createDb({ url: env.databaseUrl, poolMax: 6 });
    receiver = new WebhookReceiver({ tls: ca.issue(['localhost']), host: 'localhost' });
    await receiver.start();
  });
  after(async () => {
    await receiver.stop();
    await db('core.apps').whereIn('app_id', apps).del();
    await db.destroy();
  });
  afterEach(async () => {
    await Promise.all(made.splice(0).map((d) => d.close()));
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
    // Both matches of the consumer batch in one POST, in match order (spec: up to 100 per POST).
    expect(receiver.requests).to.have.length(1);
    const r = receiver.requests[0];
    expect(r.headers['content-type']).to.equal('application/json');
    expect(r.headers.sign).to.equal(secret);
    expect(r.headers['webhook-id']).to.equal(batchId(batch.map((p) => p.message_id)));
    // Verified with the `standardwebhooks` package, the configured secret as the raw key.
    const payload = new Webhook(secret, { format: 'raw' }).verify(r.body, r.headers as Record<string, string>) as Json[];
    expect(contracts.validate('webhook/tx/transaction-batch', payload)).to.deep.equal({ ok: true });
    expect(payload.map((t) => t.txHash)).to.deep.equal(batch.map((p) => p.tx.tx_hash));
    expect(() => new Webhook('another secret', { format: 'raw' }).verify(r.body, r.headers as Record<string, string>)).to.throw();
    const noSecret = await newApp(null);
    const single = pushes(noSecret, 1);
    await dispatcher().handlePushes(single);
    expect(receiver.requests[1].headers.sign).to.equal('');
    expect(receiver.requests[1].headers['webhook-id']).to.equal(single[0].message_id);
  });

  it('live path: 150 matches of one application go as 100 + 50 in two POSTs, in order', async () => {
    const appId = await newApp('s');
    const batch = pushes(appId, 150);
    await dispatcher().handlePushes(batch);
    expect(receiver.bodies<Json[]>().map((b) => b.length)).to.deep.equal([100, 50]);
    expect(hashes(receiver)).to.deep.equal(batch.map((p) => p.tx.tx_hash));
    // The delivered POSTs reach the attempts log in the background, shortly after, in one insert.
    const logged = () => db('tx.webhook_attempts').where({ app_id: appId }).orderBy('id');
    await waitFor(async () => (await logged()).length === 2, { timeoutMs: 3_000, what: 'the live attempts logged' });
    const log = await logged();
    expect(log.map((a: Json) => [a.path, a.transactions, a.delivered, a.status_code, a.error, a.next_retry_at, Number(a.attempted_at)])).to.deep.equal([
      ['live', 100, true, 200, null, null, clock.now()],
      ['live', 50, true, 200, null, null, clock.now()],
    ]);
    // What each POST carried: its webhook-id as the receiver got it, and the ids of the pushes' transactions in body order.
    expect(log.map((a: Json) => [a.webhook_id, a.tx_ids])).to.deep.equal([
      [receiver.requests[0].headers['webhook-id'], batch.slice(0, 100).map((p) => p.tx_id)],
      [receiver.requests[1].headers['webhook-id'], batch.slice(100).map((p) => p.tx_id)],
    ]);
  });

  it('one tenant never slows another (live path): a receiver slower than the call\'s wait answers in the background, holding no row lock; the others go on; its order holds', async () => {
    const slow = new WebhookReceiver();
    await slow.start();
    try {
      slow.delayMs = 2_000;
      const slowApp = await newApp('s');
      await db('tx.app_configs').where({ app_id: slowApp }).update({ webhook_url: slow.url });
      const fastApp = await newApp('s');
      const d = dispatcher({ callWaitMs: 300 });
      const first = pushes(slowApp, 1);
      const fastOne = pushes(fastApp, 1);
      const started = Date.now();
      await d.handlePushes([...first, ...fastOne]);
      // The call answered after its wait, not after the slow receiver; the other was delivered.
      expect(Date.now() - started).to.be.below(1_500);
      expect(hashes(receiver)).to.deep.equal(fastOne.map((p) => p.tx.tx_hash));
      expect(slow.requests).to.have.length(1);
      // The batch in flight is kept in the queue (the call committed past it), unfailed.
      expect((await queue(slowApp)).map((r: Json) => [r.payload.txHash, r.attempts])).to.deep.equal(first.map((p) => [p.tx.tx_hash, 0]));
      // No transaction holds the slow application's row during its POST.
      await db.transaction(async (trx) => {
        expect(await trx.raw('select app_id from tx.app_configs where app_id = ? for update nowait', [slowApp])).to.have.nested.property('rows.length', 1);
      });
      // The next call: the slow application's match queues behind its POST; the other's goes at once.
      const second = pushes(slowApp, 1);
      const fastTwo = pushes(fastApp, 1);
      const next = Date.now();
      await d.handlePushes([...second, ...fastTwo]);
      expect(Date.now() - next).to.be.below(1_000);
      expect(hashes(receiver)).to.deep.equal([...fastOne, ...fastTwo].map((p) => p.tx.tx_hash));
      expect((await queue(slowApp)).map((r: Json) => r.payload.txHash)).to.deep.equal([...first, ...second].map((p) => p.tx.tx_hash));
      // The scheduler cannot take it while the POST runs (the live session holds its lock).
      expect(await d.drainDue()).to.equal(0);
      expect(slow.requests).to.have.length(1);
      // The POST ends: delivered, so its row goes; the status never left active.
      await waitFor(async () => (await queue(slowApp)).length === 1, { timeoutMs: 5_000, what: 'the background POST recorded' });
      expect(await config(slowApp)).to.include({ webhook_delivery_status: 'active', webhook_last_failure_reason: null });
      slow.delayMs = 0;
      await waitFor(async () => (await d.drainDue(), (await queue(slowApp)).length === 0), { timeoutMs: 5_000, what: 'the rest sent by the scheduler' });
      expect(hashes(slow)).to.deep.equal([...first, ...second].map((p) => p.tx.tx_hash));
      expect(await config(slowApp)).to.include({ webhook_delivery_status: 'active', webhook_next_attempt_at: null });
      await waitFor(async () => (await db('tx.webhook_attempts').where({ app_id: slowApp })).length === 2, { timeoutMs: 3_000, what: 'both POSTs logged' });
      // (The delivered live POST is logged in the background, so after the retry.)
      expect((await db('tx.webhook_attempts').where({ app_id: slowApp })).map((a: Json) => [a.path, a.delivered])).to.have.deep.members([
        ['live', true],
        ['retry', true],
      ]);
    } finally {
      await slow.stop();
    }
  });

  it('one tenant never slows another (scheduler): a pass waits for no slow receiver; the next pass takes the others while it answers', async () => {
    const slow = new WebhookReceiver();
    await slow.start();
    try {
      const slowApp = await newApp('s');
      await db('tx.app_configs').where({ app_id: slowApp }).update({ webhook_url: slow.url });
      const fastApp = await newApp('s');
      const d = dispatcher({ callWaitMs: 800 });
      // Both fail once, so both queues wait for the scheduler.
      receiver.status = 503;
      slow.status = 503;
      const slowQueued = pushes(slowApp, 2);
      await d.handlePushes([...slowQueued, ...pushes(fastApp, 1)]);
      receiver.status = 200;
      slow.status = 200;
      slow.delayMs = 2_700;
      await clock.advance(1_000);
      const started = Date.now();
      expect(await d.drainDue()).to.equal(1); // the fast one; the slow one answers in the background
      expect(Date.now() - started).to.be.below(1_500);
      // The fast application fails again and is due a second later: the next pass takes it while
      // the slow drain still runs, and does not wait for that either.
      receiver.status = 503;
      const again = pushes(fastApp, 1);
      await d.handlePushes(again);
      receiver.status = 200;
      await clock.advance(1_000);
      const nextPass = Date.now();
      expect(await d.drainDue()).to.equal(1);
      expect(Date.now() - nextPass).to.be.below(1_500);
      expect(hashes(receiver).at(-1)).to.equal(again[0].tx.tx_hash);
      expect((await queue(slowApp)).length, 'the slow drain still runs').to.equal(2);
      expect(slow.requests).to.have.length(2);
      await waitFor(async () => (await queue(slowApp)).length === 0, { timeoutMs: 5_000, what: 'the slow drain recorded' });
      expect(hashes(slow).slice(-2)).to.deep.equal(slowQueued.map((p) => p.tx.tx_hash));
      expect(await config(slowApp)).to.include({ webhook_delivery_status: 'active' });
    } finally {
      await slow.stop();
    }
  });

  it('receiver down: batches queue in order, retries follow 1 s, 2 s, 4 s …; on recovery the failed batch goes as it went, then the rest, and the status is active again', async () => {
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
    expect((await config(appId)).webhook_next_attempt_at).to.equal(String(t0 + 15_000));
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
    // The failed batch as its POSTs carried it (the same webhook-id), then those queued behind it.
    expect(receiver.bodies<Json[]>().slice(-2).map((b) => b.map((t) => t.txHash))).to.deep.equal([first.map((p) => p.tx.tx_hash), later.map((p) => p.tx.tx_hash)]);
    cfg = await config(appId);
    expect(cfg).to.include({ webhook_delivery_status: 'active', webhook_retrying_since: null });
    expect(await queue(appId)).to.deep.equal([]);
  });

  it('never recovers: the last attempt is 36 h after the first failure and disables the webhook there; the queue is parked', async () => {
    const appId = await newApp('s');
    const d = dispatcher();
    receiver.status = 500;
    const batch = pushes(appId, 2);
    await d.handlePushes(batch);
    const t0 = clock.now();
    const attemptsAt: number[] = [];
    // Walk the schedule: whenever the queue is due, attempt it, until the webhook is disabled.
    for (let i = 0; i < 60 && (await config(appId)).webhook_delivery_status !== 'disabled'; i++) {
      await clock.advance(Math.max(0, Number((await config(appId)).webhook_next_attempt_at) - clock.now()));
      const before = receiver.requests.length;
      await d.drainDue();
      if (receiver.requests.length > before) attemptsAt.push(clock.now() - t0);
    }
    const cfg = await config(appId);
    expect(cfg).to.include({ webhook_delivery_status: 'disabled', enable_webhook: false, webhook_last_failed_transaction_id: batch[0].tx_id, webhook_last_failure_reason: 'HTTP 500', webhook_next_attempt_at: null });
    // 1, 3, 7 … s, the one at 2^16 − 1 s (18.2 h), then the last one at 36 h exactly (spec: give-up 36 h after the first failure).
    expect(attemptsAt.slice(0, 3)).to.deep.equal([1_000, 3_000, 7_000]);
    expect(attemptsAt.at(-2)).to.equal(65_535_000);
    expect(attemptsAt.at(-1)).to.equal(GIVE_UP_AFTER_MS);
    expect(clock.now() - t0).to.equal(GIVE_UP_AFTER_MS);
    expect(await d.dueApps(100_000)).to.not.include(appId);
    // While disabled new matches are not queued, and the failed batch is kept.
    await d.handlePushes(pushes(appId, 1));
    expect((await queue(appId)).length).to.equal(2);

    receiver.status = 200;
    await db('tx.app_configs').where({ app_id: appId }).update({ enable_webhook: true, webhook_next_attempt_at: clock.now() });
    await d.drainDue();
    expect(hashes(receiver).slice(-2)).to.deep.equal(batch.map((p) => p.tx.tx_hash));
    expect(await config(appId)).to.include({ webhook_delivery_status: 'active', enable_webhook: true });
  });

  it('retry state per transaction: after a partial recovery a batch that never failed starts at 1 s, and gives up 36 h after its own first failure', async () => {
    // Refuses (400) every POST carrying a transaction of `refused`.
    const refused = new Set<string>();
    const picky = new WebhookReceiver({ check: (body) => {
      if ((JSON.parse(body) as Json[]).some((t) => refused.has(t.txHash))) throw new Error('refused');
    } });
    await picky.start();
    try {
      const appId = await newApp('s');
      await db('tx.app_configs').where({ app_id: appId }).update({ webhook_url: picky.url });
      const d = dispatcher({ batchSize: 2 });
      const a = pushes(appId, 2);
      const b = pushes(appId, 2);
      for (const p of [...a, ...b]) refused.add(p.tx.tx_hash);
      await d.handlePushes(a);
      const t0 = clock.now();
      // Two hours of failures of A; B comes meanwhile and queues behind, carried by no POST.
      await clock.advance(60_000);
      await d.handlePushes(b);
      for (let i = 0; i < 14; i++) {
        await clock.advance(Math.max(0, Number((await config(appId)).webhook_next_attempt_at) - clock.now()));
        await d.drainDue();
      }
      const rows = async () => (await queue(appId)).map((r: Json) => [r.payload.txHash, r.attempts, r.first_failed_at === null ? null : Number(r.first_failed_at)]);
      const aAttempts = (await queue(appId))[0].attempts as number;
      expect(aAttempts).to.be.at.least(14);
      expect(await rows()).to.deep.equal([...a.map((p) => [p.tx.tx_hash, aAttempts, t0]), ...b.map((p) => [p.tx.tx_hash, 0, null])]);
      expect(Number((await config(appId)).webhook_next_attempt_at) - clock.now()).to.be.above(3_600_000);
      // A's receiver takes it now, B's still not: A goes, B fails for the first time, and its next
      // try is 1 s away (not hours: its own schedule), its clock started now.
      for (const p of a) refused.delete(p.tx.tx_hash);
      await clock.advance(Number((await config(appId)).webhook_next_attempt_at) - clock.now());
      await d.drainDue();
      const tb = clock.now();
      expect(await rows()).to.deep.equal(b.map((p) => [p.tx.tx_hash, 1, tb]));
      expect(await config(appId)).to.include({ webhook_delivery_status: 'retrying', webhook_next_attempt_at: String(tb + 1_000) });
      // Never delivered: disabled at B's own 36 h (A's would have come 2 h earlier).
      for (let i = 0; i < 60 && (await config(appId)).webhook_delivery_status !== 'disabled'; i++) {
        await clock.advance(Math.max(0, Number((await config(appId)).webhook_next_attempt_at) - clock.now()));
        await d.drainDue();
      }
      expect(await config(appId)).to.include({ webhook_delivery_status: 'disabled', webhook_last_failed_transaction_id: b[0].tx_id });
      expect(clock.now() - tb).to.equal(GIVE_UP_AFTER_MS);
      expect(clock.now() - t0).to.be.above(GIVE_UP_AFTER_MS + 3_600_000);
    } finally {
      await picky.stop();
    }
  });

  it('a reorg reaches the receiver: the orphaned transaction comes again marked removed, in order behind what was sent', async () => {
    const appId = await newApp('s');
    const d = dispatcher();
    const [p] = pushes(appId, 1);
    await d.handlePushes([p]);
    // The block was replaced: tx-matcher pushes the transaction again, orphaned (another message id).
    const orphan = topicMessage(TOPICS.txPush, { ...p, message_id: randomBytes(16).toString('hex'), orphaned: true });
    const later = pushes(appId, 1);
    await d.handlePushes([orphan, ...later]);
    const items = receiver.bodies<Json[]>().flat();
    expect(items.map((t) => [t.txHash, t.removed])).to.deep.equal([
      [p.tx.tx_hash, undefined],
      [p.tx.tx_hash, true],
      [later[0].tx.tx_hash, undefined],
    ]);
    for (const body of receiver.bodies()) expect(contracts.validate('webhook/tx/transaction-batch', body)).to.deep.equal({ ok: true });
    // Otherwise the same TransactionResult: the receiver finds what it credited by chain and hash.
    const { removed, ...rest } = items[1];
    expect(removed).to.equal(true);
    expect(rest).to.deep.equal(items[0]);
    // Queued (the receiver down), it keeps its mark through the retry.
    receiver.status = 503;
    const again = topicMessage(TOPICS.txPush, { ...later[0], message_id: randomBytes(16).toString('hex'), orphaned: true });
    await d.handlePushes([again]);
    receiver.status = 200;
    await clock.advance(1_000);
    await d.drainDue();
    expect(receiver.bodies<Json[]>().at(-1)!.map((t) => [t.txHash, t.removed])).to.deep.equal([[later[0].tx.tx_hash, true]]);
  });

  it('the same content keeps its webhook-id: the live send, its retries and a replay of the same pushes', async () => {
    const appId = await newApp('s');
    const d = dispatcher();
    receiver.status = 503;
    const first = pushes(appId, 3);
    await d.handlePushes(first);
    const behind = pushes(appId, 2);
    await d.handlePushes(behind);
    await clock.advance(1_000);
    await d.drainDue();
    receiver.status = 200;
    await clock.advance(2_000);
    await d.drainDue();
    const sent = receiver.requests.map((r) => ({ id: String(r.headers['webhook-id']), hashes: (JSON.parse(r.body) as Json[]).map((t) => t.txHash) }));
    const firstId = batchId(first.map((p) => p.message_id));
    // The failed live POST, its failed retry and its delivered retry: the same three, the same id;
    // the two queued behind (never sent with them) go in a POST of their own.
    expect(sent).to.deep.equal([
      { id: firstId, hashes: first.map((p) => p.tx.tx_hash) },
      { id: firstId, hashes: first.map((p) => p.tx.tx_hash) },
      { id: firstId, hashes: first.map((p) => p.tx.tx_hash) },
      { id: batchId(behind.map((p) => p.message_id)), hashes: behind.map((p) => p.tx.tx_hash) },
    ]);
    expect(await queue(appId)).to.deep.equal([]);
    // A replay of the same records (a crash before the offsets were committed): the same id again.
    await d.handlePushes(first);
    expect(receiver.requests.at(-1)!.headers['webhook-id']).to.equal(firstId);
  });

  it('re-enabled after the disable: at once retrying, a match before the next scheduler pass queues behind the old batch, both delivered in order', async () => {
    const appId = await newApp('s');
    const d = dispatcher();
    receiver.status = 500;
    const old = pushes(appId, 2);
    await d.handlePushes(old);
    await clock.advance(GIVE_UP_AFTER_MS);
    await d.drainDue();
    expect(await config(appId)).to.include({ webhook_delivery_status: 'disabled', enable_webhook: false });

    receiver.status = 200;
    // What the configuration API does when `enable_webhook` is set again.
    await db.transaction(async (trx) => {
      await trx('tx.app_configs').where({ app_id: appId }).update({ enable_webhook: true });
      await resumeWebhookQueue(trx, appId, clock.now());
    });
    expect(await config(appId)).to.include({ webhook_delivery_status: 'retrying', webhook_next_attempt_at: String(clock.now()) });
    const fresh = pushes(appId, 1);
    await d.handlePushes(fresh);
    expect((await queue(appId)).map((r: Json) => r.payload.txHash)).to.deep.equal([...old, ...fresh].map((p) => p.tx.tx_hash));
    const before = receiver.requests.length;
    await d.drainDue();
    expect(hashes(receiver).slice(-3)).to.deep.equal([...old, ...fresh].map((p) => p.tx.tx_hash));
    // The kept batch as its POSTs carried it, then the new match.
    expect(receiver.requests.length - before).to.equal(2);
    expect(await config(appId)).to.include({ webhook_delivery_status: 'active', webhook_next_attempt_at: null });
  });

  it('a replaced webhook_url makes a long-backed-off queue due at once; new matches join behind it', async () => {
    const dead = new WebhookReceiver();
    await dead.start();
    try {
      dead.status = 503;
      const appId = await newApp('s');
      await db('tx.app_configs').where({ app_id: appId }).update({ webhook_url: dead.url });
      const d = dispatcher();
      const queued = pushes(appId, 3);
      await d.handlePushes(queued);
      // Two hours of failures: the next attempt is more than an hour away.
      for (let i = 0; i < 14; i++) {
        await clock.advance(Math.max(0, Number((await config(appId)).webhook_next_attempt_at) - clock.now()));
        await d.drainDue();
      }
      expect(Number((await config(appId)).webhook_next_attempt_at) - clock.now()).to.be.above(3_600_000);
      const later = pushes(appId, 2);
      await d.handlePushes(later);
      await db.transaction(async (trx) => {
        await trx('tx.app_configs').where({ app_id: appId }).update({ webhook_url: receiver.url });
        await resumeWebhookQueue(trx, appId, clock.now());
      });
      await d.drainDue();
      expect(hashes(receiver)).to.deep.equal([...queued, ...later].map((p) => p.tx.tx_hash));
      expect(await config(appId)).to.include({ webhook_delivery_status: 'active' });
    } finally {
      await dead.stop();
    }
  });

  it('scheduler: queues that cannot be delivered never crowd out a healthy one; most overdue first', async () => {
    const d = dispatcher();
    receiver.status = 500;
    // 150 applications whose queues were due long before, then switched off, made inactive,
    // left without a URL, or had their configuration deleted.
    const stuck: string[] = [];
    for (let i = 0; i < 150; i++) stuck.push(await newApp(null));
    await d.handlePushes(stuck.flatMap((a) => pushes(a, 1)));
    const healthy = await newApp('s');
    await d.handlePushes(pushes(healthy, 1));
    expect((await db('tx.app_configs').whereIn('app_id', [...stuck, healthy]).whereNotNull('webhook_next_attempt_at')).length).to.equal(151);
    await db('tx.app_configs').whereIn('app_id', stuck.slice(0, 50)).update({ enable_webhook: false });
    await db('tx.app_configs').whereIn('app_id', stuck.slice(50, 80)).update({ is_active: false });
    await db('tx.app_configs').whereIn('app_id', stuck.slice(80, 100)).update({ webhook_url: null });
    await db('tx.app_configs').whereIn('app_id', stuck.slice(100)).del();
    await db('tx.app_configs').where({ app_id: healthy }).update({ webhook_next_attempt_at: clock.now() - 1 });
    receiver.status = 200;
    receiver.requests.length = 0;
    await clock.advance(2_000);
    const due = await d.dueApps(100);
    expect(due).to.include(healthy);
    expect(due.filter((a) => stuck.includes(a))).to.deep.equal([]);
    await d.drainDue();
    expect(receiver.requests).to.have.length(1);
    expect(await queue(healthy)).to.deep.equal([]);
    // The stuck queues are kept, not dropped.
    expect((await db('tx.webhook_queue').whereIn('app_id', stuck)).length).to.equal(150);
    // The order is served by the index (the planner may not scan a table sequentially here).
    await db.transaction(async (trx) => {
      await trx.raw('set local enable_seqscan = off');
      await trx.raw('set local enable_bitmapscan = off');
      const plan = (await trx.raw(`explain select app_id from tx.app_configs where webhook_next_attempt_at <= 0 order by webhook_next_attempt_at limit 100`)) as { rows: Array<{ 'QUERY PLAN': string }> };
      const text = plan.rows.map((r) => r['QUERY PLAN']).join('\n');
      expect(text).to.include('app_configs_webhook_due_idx');
      expect(text).to.not.match(/Sort/);
    });
  });

  it('manual retry with a deadline: answers in time with what it did; the running POST finishes and is recorded', async () => {
    const appId = await newApp('s');
    const d = dispatcher();
    receiver.status = 503;
    const batch = pushes(appId, 4);
    await d.handlePushes(batch);
    receiver.status = 200;
    // Slower than the connect timeout (2 s), within the response timeout (3 s): a slow receiver, delivered.
    receiver.delayMs = 2_400;
    const started = Date.now();
    const report = await d.drainApp(appId, { force: true, deadlineMs: 300 });
    expect(Date.now() - started).to.be.below(1_500);
    expect(report).to.deep.include({ attempted: 4, delivered: 0, failed: 0, finalFailed: false, pending: 4 });
    await waitFor(async () => (await queue(appId)).length === 0 && (await config(appId)).webhook_delivery_status === 'active', { timeoutMs: 5_000, what: 'the running POST recorded' });
    expect(await config(appId)).to.include({ webhook_delivery_status: 'active', webhook_next_attempt_at: null });
    const log = await db('tx.webhook_attempts').where({ app_id: appId }).orderBy('id');
    expect(log.map((a: Json) => [a.path, a.transactions, a.delivered, a.status_code])).to.deep.equal([
      ['live', 4, false, 503],
      ['retry', 4, true, 200],
    ]);
    expect(log[1].latency_ms).to.be.at.least(2_300);
  });

  it('the attempts log keeps what is younger than the retention and drops the rest in chunks', async () => {
    const appId = await newApp('s');
    // A clock in 2000, so the cutoff reaches no attempt of any other test sharing the database.
    const past = new ManualClock(Date.UTC(2000, 0, 1));
    const d = new WebhookDispatcher({ db, send: async () => ({ ok: true, status: 200 }), openSecret: (x) => x, clock: past, logger: createLogger({ name: 'webhooks-test', level: 'silent' }), registry: new Registry() });
    const at = (ageMs: number) => ({ app_id: appId, attempted_at: past.now() - ageMs, path: 'live', transactions: 1, delivered: true, status_code: 200, error: null, latency_ms: 3, next_retry_at: null });
    await db('tx.webhook_attempts').insert([at(10_000), at(9_000), at(8_000), at(7_000), at(1_000)]);
    expect(await d.pruneAttempts(5_000, 2)).to.equal(4);
    expect((await db('tx.webhook_attempts').where({ app_id: appId })).map((r: Json) => Number(r.attempted_at))).to.deep.equal([past.now() - 1_000]);
  });

  it('two dispatchers share the queue: an application is drained by one at a time (its delivery lock)', async () => {
    const appId = await newApp('s');
    receiver.status = 500;
    await dispatcher().handlePushes(pushes(appId, 3));
    receiver.status = 200;
    receiver.delayMs = 300;
    await clock.advance(1000);
    const [a, b] = await Promise.all([dispatcher().drainApp(appId), dispatcher().drainApp(appId)]);
    expect([a, b].filter((r) => r === undefined)).to.have.length(1);
    expect(receiver.maxInFlight).to.equal(1);
    expect(receiver.requests.length).to.equal(2); // the failed live POST and one retry batch
    expect(await queue(appId)).to.deep.equal([]);
  });

  it('live path: the lock of a delivering application is kept from batch to batch, a copy meeting it queues behind, and order holds', async () => {
    const appId = await newApp('s');
    const other = await newApp('s');
    // Kept for as long as the test needs: the idle release must not come between the steps.
    const live = dispatcher({ liveHoldMs: 60_000 });
    const copy = dispatcher();
    const p1 = pushes(appId, 2);
    await live.handlePushes(p1);
    // Between batches the lock stays with the live session: another copy cannot take it ...
    expect(await copy.drainApp(appId)).to.equal(undefined);
    // ... and its live path queues its matches behind, instead of sending them past the holder.
    const p2 = pushes(appId, 1);
    await copy.handlePushes(p2);
    expect((await queue(appId)).map((r: Json) => r.payload.txHash)).to.deep.equal(p2.map((p) => p.tx.tx_hash));
    // The holder's next batch sees the queue: its matches go behind p2, and it lets go.
    const p3 = pushes(appId, 1);
    await live.handlePushes([...p3, ...pushes(other, 1)]);
    expect((await queue(appId)).map((r: Json) => r.payload.txHash)).to.deep.equal([...p2, ...p3].map((p) => p.tx.tx_hash));
    const report = await copy.drainApp(appId, { force: true });
    expect(report).to.deep.include({ delivered: 2, pending: 0 });
    const mine = receiver.bodies<Json[]>().flat().filter((t) => [...p1, ...p2, ...p3].some((p) => p.tx.tx_hash === t.txHash));
    expect(mine.map((t) => t.txHash)).to.deep.equal([...p1, ...p2, ...p3].map((p) => p.tx.tx_hash));
    // That batch queued, so it let go of every application, the one it delivered to as well.
    expect(await copy.drainApp(other)).to.deep.include({ attempted: 0, pending: 0 });
    await live.handlePushes(pushes(other, 1));
    expect(await copy.drainApp(other)).to.equal(undefined);
    // The holder's own scheduler or manual retry lets go first; a quiet live path after its hold.
    expect(await live.drainApp(other)).to.deep.include({ attempted: 0, pending: 0 });
    expect(await copy.drainApp(other)).to.deep.include({ attempted: 0, pending: 0 });
    const quiet = dispatcher({ liveHoldMs: 50 });
    await quiet.handlePushes(pushes(other, 1));
    await waitFor(async () => (await copy.drainApp(other)) !== undefined, { timeoutMs: 5_000, what: 'the idle live path let go' });
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
    expect(await postWebhook(receiver.url.replace('https:', 'http:'), '[]', {}, strict)).to.deep.equal({ ok: false, error: 'webhook URL must use https' });
    expect(await postWebhook(receiver.url, '[]', {}, strict)).to.deep.equal({ ok: false, error: 'localhost resolves to no public address' });
    expect(receiver.requests).to.have.length(0);
    // Redirects are not followed: a 3xx is a failure.
    receiver.status = 302;
    expect(await postWebhook(receiver.url, '[]', {}, sender)).to.deep.include({ ok: false, status: 302 });
  });
});
