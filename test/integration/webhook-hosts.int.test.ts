import { randomBytes, randomInt } from 'node:crypto';
import dns from 'node:dns';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { Registry } from 'prom-client';
import { Webhook } from 'standardwebhooks';
import { TOPICS, loadContracts } from '@chainpipe/contracts';
import { ApiKeyRepository, createDb, type Knex } from '@chainpipe/db';
import { ConfigError, SecretBox, createLogger, loadConfig } from '@chainpipe/runtime';
import {
  TestCertificateAuthority,
  WebhookReceiver,
  createRegistryTopics,
  evmBlockItem,
  freePort,
  randomSuffix,
  rebaseBlock,
  spawnTs,
  stopProcess,
  streamerBody,
  testEnv,
  testKafka,
  topicMessage,
  uniquePrefix,
  waitFor,
  waitReady,
  type RunningProcess,
} from '@chainpipe/testing';
import { toTransactionResult } from '@chainpipe/tx-records';
import { WebhookDispatcher, postWebhook, webhookTrustConfig, type Lookup, type SenderOptions } from '@chainpipe/webhooks';
import { ERC20_TRANSFER } from '../../apps/tx-gateway/src/api-examples';

type Json = any;

/**
 * Webhook receivers as deployed: named by a host name (the real resolver, both address families,
 * and an injected resolver answering several addresses), over https with a certificate of a CA
 * made here and trusted through WEBHOOK_CA_FILE, and the production target check (private
 * targets not allowed) on what a name resolves to. End to end, a block posted to /stream reaches
 * receivers named `localhost` through chain-ingest, chain-parser, tx-matcher and
 * webhook-dispatcher processes.
 */
describe('webhook receivers behind host names and https (real resolver, injected resolver, test CA)', function () {
  this.timeout(180_000);
  const env = testEnv();
  const contracts = loadContracts();
  const ca = new TestCertificateAuthority();
  const caDir = mkdtempSync(path.join(tmpdir(), 'webhook-ca-'));
  const caFile = path.join(caDir, 'ca.pem');
  writeFileSync(caFile, ca.cert);
  const base: SenderOptions = { allowPrivate: true, connectTimeoutMs: 2_000, responseTimeoutMs: 3_000, maxResponseBytes: 1024 };
  const receivers: WebhookReceiver[] = [];
  const receiver = async (opts: ConstructorParameters<typeof WebhookReceiver>[0]) => {
    const r = new WebhookReceiver(opts);
    receivers.push(r);
    return r.start();
  };
  /** One TransactionResult body, as the dispatcher sends. */
  const body = JSON.stringify([toTransactionResult({ ...ERC20_TRANSFER, tx_hash: `0x${randomBytes(32).toString('hex')}` })]);
  let db: Knex;
  const apps: string[] = [];

  before(() => {
    db = createDb({ url: env.databaseUrl, poolMax: 3 });
  });
  after(async () => {
    await Promise.all(receivers.map((r) => r.stop()));
    if (apps.length) await db('core.apps').whereIn('app_id', apps).del();
    await db.destroy();
    rmSync(caDir, { recursive: true, force: true });
  });

  describe('the sender', () => {
    it('real resolver: http://localhost:<port> is delivered, to a receiver listening on 127.0.0.1 and ::1, on an address the system resolves localhost to', async () => {
      const both = await receiver({ host: 'localhost', listen: ['127.0.0.1', '::1'] });
      expect(both.url).to.match(/^http:\/\/localhost:\d+\/hook$/);
      const resolved = (await dns.promises.lookup('localhost', { all: true, verbatim: true })).map((a) => a.address);
      expect(await postWebhook(both.url, body, {}, base)).to.deep.equal({ ok: true, status: 200 });
      expect(both.requests).to.have.length(1);
      expect(resolved).to.include(both.requests[0].localAddress);
      expect(both.requests[0].body).to.equal(body);
      // Each family's listener takes POSTs on its own (IPv6 as a literal: never through a lookup).
      expect(await postWebhook(both.url.replace('localhost', '[::1]'), body, {}, base)).to.deep.equal({ ok: true, status: 200 });
      expect(both.requests[1].localAddress).to.equal('::1');
    });

    it('injected resolver: a name answering IPv6 then IPv4 is tried address after address (autoSelectFamily asks for the whole list); an IPv6-only name reaches ::1', async () => {
      const v4 = await receiver({ host: 'hooks.test', listen: ['127.0.0.1'] });
      const twoFamilies: Lookup = async () => [
        { address: '::1', family: 6 },
        { address: '127.0.0.1', family: 4 },
      ];
      // Nothing listens at ::1 on v4's port: refused there, delivered at 127.0.0.1.
      expect(await postWebhook(v4.url, body, {}, { ...base, lookup: twoFamilies })).to.deep.equal({ ok: true, status: 200 });
      expect(v4.requests.map((r) => r.localAddress)).to.deep.equal(['127.0.0.1']);
      const v6 = await receiver({ host: 'hooks6.test', listen: ['::1'] });
      expect(await postWebhook(v6.url, body, {}, { ...base, lookup: async () => [{ address: '::1', family: 6 }] })).to.deep.equal({ ok: true, status: 200 });
      expect(v6.requests.map((r) => r.localAddress)).to.deep.equal(['::1']);
    });

    it('production rules: of a name answering private and public addresses only the public ones are dialled; a name with only private ones is refused with the reason', async () => {
      const local = await receiver({ tls: ca.issue(['hooks.example.com']), host: 'hooks.example.com' });
      const strict: SenderOptions = { ...base, allowPrivate: false, extraCa: ca.cert, connectTimeoutMs: 1_000 };
      // The receiver listens at 127.0.0.1, the first address answered: never dialled. The public
      // one (a documentation-free unicast address nothing here answers) is, and fails there.
      const mixed: Lookup = async () => [
        { address: '127.0.0.1', family: 4 },
        { address: '10.20.30.40', family: 4 },
        { address: '93.184.215.14', family: 4 },
      ];
      const tried = await postWebhook(local.url, body, {}, { ...strict, lookup: mixed });
      expect(tried.ok).to.equal(false);
      expect((tried as { error: string }).error).to.not.match(/no public address/);
      const privateOnly: Lookup = async () => [
        { address: '127.0.0.1', family: 4 },
        { address: '::1', family: 6 },
        { address: '10.20.30.40', family: 4 },
      ];
      expect(await postWebhook(local.url, body, {}, { ...strict, lookup: privateOnly })).to.deep.equal({ ok: false, error: 'hooks.example.com resolves to no public address' });
      // The same receiver with private targets allowed (development): delivered over https.
      expect(await postWebhook(local.url, body, {}, { ...strict, allowPrivate: true, lookup: privateOnly })).to.deep.equal({ ok: true, status: 200 });
      expect(local.requests).to.have.length(1);
    });

    it('https under a host name: delivered when the CA is trusted (WEBHOOK_CA_FILE), refused without it and for a certificate of another name', async () => {
      const secure = await receiver({ tls: ca.issue(['localhost']), host: 'localhost' });
      expect(secure.url).to.match(/^https:\/\/localhost:\d+\/hook$/);
      const trusted: SenderOptions = { ...base, extraCa: loadConfig(webhookTrustConfig, { WEBHOOK_CA_FILE: caFile }).WEBHOOK_CA_FILE!.pem };
      expect(await postWebhook(secure.url, body, {}, trusted)).to.deep.equal({ ok: true, status: 200 });
      expect(secure.requests.map((r) => r.body)).to.deep.equal([body]);
      const untrusted = await postWebhook(secure.url, body, {}, base);
      expect(untrusted).to.deep.equal({ ok: false, error: 'unable to verify the first certificate' });
      const otherName = await receiver({ tls: ca.issue(['hooks.example.org']), host: 'localhost' });
      const mismatch = await postWebhook(otherName.url, body, {}, trusted);
      expect((mismatch as { error: string }).error).to.match(/Hostname\/IP does not match certificate's altnames/);
      expect(otherName.requests).to.have.length(0);
    });

    it('WEBHOOK_CA_FILE is checked at boot: unreadable, without a certificate, or not a CA is a configuration error', () => {
      const notCa = path.join(caDir, 'leaf.pem');
      writeFileSync(notCa, ca.issue(['localhost']).cert);
      const empty = path.join(caDir, 'empty.pem');
      writeFileSync(empty, 'not a certificate\n');
      for (const [file, problem] of [
        [path.join(caDir, 'missing.pem'), /WEBHOOK_CA_FILE cannot be read/],
        [empty, /WEBHOOK_CA_FILE holds no PEM certificate/],
        [notCa, /WEBHOOK_CA_FILE holds a certificate that is not a CA/],
      ] as const) {
        expect(() => loadConfig(webhookTrustConfig, { WEBHOOK_CA_FILE: file }), file)
          .to.throw(ConfigError)
          .with.property('message')
          .that.matches(problem);
      }
      expect(loadConfig(webhookTrustConfig, {}).WEBHOOK_CA_FILE).to.equal(null);
      expect(JSON.stringify(loadConfig(webhookTrustConfig, { WEBHOOK_CA_FILE: caFile }))).to.equal(JSON.stringify({ WEBHOOK_CA_FILE: caFile }));
    });

    it('the dispatcher records the refusal: a name resolving only to private addresses leaves the application retrying with that reason', async () => {
      const appId = `whh-${randomBytes(4).toString('hex')}`;
      await new ApiKeyRepository(db).createApp(appId, appId);
      apps.push(appId);
      await db('tx.app_configs').insert({ app_id: appId, enable_webhook: true, webhook_url: 'https://hooks.example.com/chainpipe', webhook_secret_enc: null });
      const d = new WebhookDispatcher({
        db,
        send: (url, b, headers) => postWebhook(url, b, headers, { ...base, allowPrivate: false, lookup: async () => [{ address: '192.168.7.7', family: 4 }, { address: 'fe80::7', family: 6 }] }),
        openSecret: (s) => s,
        logger: createLogger({ name: 'webhook-hosts-test', level: 'silent' }),
        registry: new Registry(),
      });
      try {
        const tx = { ...ERC20_TRANSFER, tx_hash: `0x${randomBytes(32).toString('hex')}` };
        await d.handlePushes([
          topicMessage(TOPICS.txPush, { message_id: randomBytes(16).toString('hex'), app_id: appId, tx_id: '4242', network: 'ethereum-mainnet', listen_address: [tx.receiver!], is_reorg_resend: false, orphaned: false, ws: false, webhook: true, matched_at: Date.now(), tx }),
        ]);
        const cfg = await db('tx.app_configs').where({ app_id: appId }).first();
        expect(cfg).to.include({ webhook_delivery_status: 'retrying', webhook_last_failure_reason: 'hooks.example.com resolves to no public address' });
        const [attempt] = await db('tx.webhook_attempts').where({ app_id: appId });
        expect(attempt).to.include({ delivered: false, status_code: null, error: 'hooks.example.com resolves to no public address' });
      } finally {
        await d.close();
      }
    });
  });

  describe('end to end: /stream → parser → matcher → webhook-dispatcher → receivers named localhost', () => {
    const secret = randomBytes(12).toString('hex');
    const secretKey = randomBytes(32).toString('hex');
    const procs: RunningProcess[] = [];
    let ingest = '';
    const raw = evmBlockItem();
    const status = new Map<string, string>(raw.receipts.map((r: Json) => [r.transactionHash, r.status]));
    // Two plain ETH transfers of the fixture block to different receivers, read from the raw JSON.
    const natives = raw.block.transactions.filter((t: Json) => BigInt(t.value) > 0n && t.input === '0x' && status.get(t.hash) === '0x1');
    const txA = natives[0];
    const txB = natives.find((t: Json) => ![txA.to, txA.from].map((a: string) => a.toLowerCase()).includes(t.to.toLowerCase()) && t.from.toLowerCase() !== txA.to.toLowerCase());
    const app = { plain: `whhA-${randomBytes(4).toString('hex')}`, secure: `whhB-${randomBytes(4).toString('hex')}` };
    const hookSecret = `sign-${randomBytes(4).toString('hex')}`;
    let plain: WebhookReceiver;
    let secure: WebhookReceiver;
    let prefix = '';

    before(async () => {
      plain = await receiver({ host: 'localhost', listen: ['127.0.0.1', '::1'] });
      secure = await receiver({ tls: ca.issue(['localhost']), host: 'localhost' });
      const box = new SecretBox(secretKey);
      for (const [appId, url, address] of [
        [app.plain, plain.url, txA.to.toLowerCase()],
        [app.secure, secure.url, txB.to.toLowerCase()],
      ] as const) {
        await new ApiKeyRepository(db).createApp(appId, appId);
        apps.push(appId);
        await db('tx.app_configs').insert({ app_id: appId, enable_webhook: true, webhook_url: url, webhook_secret_enc: box.seal(hookSecret) });
        await db('tx.monitored_addresses').insert({ app_id: appId, chain_type: 'ethereum', address });
      }
      prefix = uniquePrefix('whh');
      await createRegistryTopics(prefix, [TOPICS.chainRaw, TOPICS.chainFetched, TOPICS.chainTx, TOPICS.addressesChanges, TOPICS.txPush]);
      const common = { KAFKA_BROKERS: env.kafkaBrokers.join(','), KAFKA_TOPIC_PREFIX: prefix, DATABASE_URL: env.databaseUrl, REDIS_URL: env.redisUrl, LOG_LEVEL: 'warn' };
      const [ingestPort, ingestOps, parserOps, matcherOps, dispatcherOps] = await Promise.all(Array.from({ length: 5 }, () => freePort()));
      const started: Array<[RunningProcess, number]> = [
        [spawnTs('apps/chain-ingest/src/main.ts', { ...common, STREAM_SECRET: secret, PORT: String(ingestPort), OPS_PORT: String(ingestOps) }), ingestOps],
        [spawnTs('apps/chain-parser/src/main.ts', { ...common, OPS_PORT: String(parserOps), CHAIN_PARSER_GROUP: `${prefix}parser` }), parserOps],
        [spawnTs('apps/tx-matcher/src/main.ts', { ...common, OPS_PORT: String(matcherOps), TX_MATCHER_GROUP: `${prefix}matcher` }), matcherOps],
        [
          // Private targets allowed (the receivers are on this machine, as under `make up`); the
          // test CA trusted through the configuration.
          spawnTs('apps/webhook-dispatcher/src/main.ts', { ...common, OPS_PORT: String(dispatcherOps), WEBHOOK_DISPATCHER_GROUP: `${prefix}dispatcher`, WEBHOOK_SECRET_KEY: secretKey, ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true', WEBHOOK_CA_FILE: caFile }),
          dispatcherOps,
        ],
      ];
      procs.push(...started.map(([p]) => p));
      await Promise.all(started.map(([p, ops]) => waitReady(p, ops, 150_000)));
      ingest = `http://127.0.0.1:${ingestPort}`;
    });

    after(async () => {
      for (const p of procs) await stopProcess(p);
    });

    it('one tenant never slows another: beside a receiver answering 200 after 8 s, another application\'s webhook latency stays within 1 s of its latency alone; the slow one keeps its order', async () => {
      const slowReceiver = await receiver({ host: 'localhost' });
      slowReceiver.delayMs = 8_000;
      const fastReceiver = await receiver({ host: 'localhost' });
      const slowApp = `whhS-${randomBytes(4).toString('hex')}`;
      const fastApp = `whhF-${randomBytes(4).toString('hex')}`;
      for (const [appId, url] of [
        [slowApp, slowReceiver.url],
        [fastApp, fastReceiver.url],
      ]) {
        await new ApiKeyRepository(db).createApp(appId, appId);
        apps.push(appId);
        await db('tx.app_configs').insert({ app_id: appId, enable_webhook: true, webhook_url: url, webhook_secret_enc: null });
      }
      const producer = testKafka('webhook-tenants').producer();
      await producer.connect();
      const sentAt = new Map<string, number>();
      const push = async (appId: string) => {
        const tx = { ...ERC20_TRANSFER, tx_hash: `0x${randomBytes(32).toString('hex')}` };
        const p = topicMessage(TOPICS.txPush, { message_id: randomBytes(16).toString('hex'), app_id: appId, tx_id: String(randomInt(1e9)), network: 'ethereum-mainnet', listen_address: [tx.receiver!], is_reorg_resend: false, orphaned: false, ws: false, webhook: true, matched_at: Date.now(), tx });
        sentAt.set(tx.tx_hash, Date.now());
        await producer.send({ topic: prefix + TOPICS.txPush.name, acks: -1, messages: [{ key: appId, value: JSON.stringify(p) }] });
        return tx.tx_hash;
      };
      /** Latency of each of `sent` at the fast receiver, once all arrived. */
      const latencies = async (sent: string[]) => {
        await waitFor(() => sent.every((h) => fastReceiver.requests.some((r) => r.body.includes(h))), { timeoutMs: 30_000, what: 'the fast application\'s webhooks' });
        return sent.map((h) => fastReceiver.requests.find((r) => r.body.includes(h))!.at - sentAt.get(h)!);
      };
      const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
      try {
        const alone: string[] = [];
        for (let i = 0; i < 6; i++) {
          alone.push(await push(fastApp));
          await new Promise((r) => setTimeout(r, 250));
        }
        const aloneMs = await latencies(alone);
        const beside: string[] = [];
        const slowSent: string[] = [];
        for (let i = 0; i < 6; i++) {
          slowSent.push(await push(slowApp));
          beside.push(await push(fastApp));
          await new Promise((r) => setTimeout(r, 250));
        }
        const besideMs = await latencies(beside);
        expect(median(besideMs), `beside ${besideMs.join(',')} ms, alone ${aloneMs.join(',')} ms`).to.be.at.most(median(aloneMs) + 1_000);
        expect(Math.max(...besideMs), `beside ${besideMs.join(',')} ms, alone ${aloneMs.join(',')} ms`).to.be.at.most(Math.max(...aloneMs) + 1_000);
        // The slow receiver gets every one of its transactions, in order (answered, never failed).
        await waitFor(() => slowSent.every((h) => slowReceiver.requests.some((r) => r.body.includes(h))), { timeoutMs: 40_000, what: 'the slow application\'s webhooks' });
        const order = slowReceiver.bodies<Json[]>().flat().map((t) => t.txHash);
        expect(order.filter((h, i) => order.indexOf(h) === i)).to.deep.equal(slowSent);
        expect(await db('tx.app_configs').where({ app_id: slowApp }).first()).to.include({ webhook_delivery_status: 'active', webhook_last_failure_reason: null });
      } finally {
        await producer.disconnect();
      }
    });

    it('a streamed block reaches http://localhost:<port>/hook and https://localhost:<port>/hook (the test CA trusted), each application its own transaction', async () => {
      const block = rebaseBlock('evm', raw, 3_000_000_000 + randomInt(1_000_000_000), randomSuffix());
      const res = await fetch(`${ingest}/stream`, {
        method: 'POST',
        headers: { 'content-secret-x': secret, 'cl-stream-network': 'ethereum-mainnet', 'content-type': 'application/octet-stream' },
        body: streamerBody([block.item], { network: 'ethereum-mainnet', dataset: 'block_with_receipts', start: block.height }),
      });
      expect(res.status).to.equal(200);
      const hashA = block.hashes.get(txA.hash)!;
      const hashB = block.hashes.get(txB.hash)!;
      for (const [r, hash, tx] of [
        [plain, hashA, txA],
        [secure, hashB, txB],
      ] as const) {
        const hit = await waitFor(() => r.requests.find((q) => q.body.includes(hash)), { timeoutMs: 60_000, what: `webhook for ${hash} at ${r.url}` });
        const items = new Webhook(hookSecret, { format: 'raw' }).verify(hit.body, hit.headers as Record<string, string>) as Json[];
        expect(contracts.validate('webhook/tx/transaction-batch', items)).to.deep.equal({ ok: true });
        expect(items.find((t) => t.txHash === hash)).to.include({ chainType: 'evm', chainId: 1, receiver: tx.to.toLowerCase(), amount: BigInt(tx.value).toString() });
      }
      expect(plain.requests.some((q) => q.body.includes(hashB)), 'each application gets its own').to.equal(false);
      expect(secure.requests.some((q) => q.body.includes(hashA)), 'each application gets its own').to.equal(false);
      for (const appId of [app.plain, app.secure]) expect(await db('tx.app_configs').where({ app_id: appId }).first()).to.include({ webhook_delivery_status: 'active', webhook_last_failure_reason: null });
    });

    it('a reorg reaches the receiver: another block at the same height orphans the transaction it got, which comes again marked removed; the new block\'s comes as new', async () => {
      const post = async (block: ReturnType<typeof rebaseBlock>) => {
        const res = await fetch(`${ingest}/stream`, {
          method: 'POST',
          headers: { 'content-secret-x': secret, 'cl-stream-network': 'ethereum-mainnet', 'content-type': 'application/octet-stream' },
          body: streamerBody([block.item], { network: 'ethereum-mainnet', dataset: 'block_with_receipts', start: block.height }),
        });
        expect(res.status).to.equal(200);
      };
      const height = 3_000_000_000 + randomInt(1_000_000_000);
      const first = rebaseBlock('evm', raw, height, randomSuffix());
      await post(first);
      const gone = first.hashes.get(txA.hash)!;
      const itemsOf = (hash: string) => plain.bodies<Json[]>().flat().filter((t) => t.txHash === hash);
      await waitFor(() => itemsOf(gone).length === 1, { timeoutMs: 60_000, what: 'the first block\'s webhook' });
      // The same height under another hash (its transactions under other hashes too): a reorg.
      const second = rebaseBlock('evm', raw, height, randomSuffix());
      await post(second);
      const replacement = second.hashes.get(txA.hash)!;
      await waitFor(() => itemsOf(gone).some((t) => t.removed === true) && itemsOf(replacement).length > 0, { timeoutMs: 60_000, what: 'the reorg at the receiver' });
      const [sent, removed] = itemsOf(gone);
      expect(sent).to.not.have.property('removed');
      const { removed: flag, ...rest } = removed;
      expect(flag).to.equal(true);
      expect(rest).to.deep.include({ txHash: gone, chainType: 'evm', chainId: 1, receiver: txA.to.toLowerCase(), amount: BigInt(txA.value).toString() });
      expect(itemsOf(replacement)[0]).to.not.have.property('removed');
      for (const body of plain.bodies()) expect(contracts.validate('webhook/tx/transaction-batch', body)).to.deep.equal({ ok: true });
    });
  });
});
