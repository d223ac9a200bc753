import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { networkByName } from '@chainpipe/chains';
import { TOPICS, type TxPushMessage } from '@chainpipe/contracts';
import { ApiKeyRepository, createDb, type Knex } from '@chainpipe/db';
import { SecretBox } from '@chainpipe/runtime';
import { topicMessage, WebhookReceiver, createRegistryTopics, evmBlockItem, freePort, produceJson, spawnTs, stopProcess, testEnv, uniquePrefix, waitFor, waitReady, type RunningProcess } from '@chainpipe/testing';
import { parseEvmPayload } from '@chainpipe/tx-parsers';
import { Webhook } from 'standardwebhooks';
import { batchId } from '@chainpipe/webhooks';

type Json = any;

/**
 * webhook-dispatcher killed with SIGKILL in the middle of a stream of pushes, then restarted:
 * every push reaches the receiver, each POST's `webhook-id` is derived from the message ids it
 * carries (a lone push: its message id), and what arrives twice is the same transaction, which a
 * receiver deduplicates on chainType + chainId + txHash (spec).
 */
describe('webhook-dispatcher SIGKILL mid-load (real process, Kafka, Postgres, HTTP receiver)', function () {
  this.timeout(180_000);
  const env = testEnv();
  const network = networkByName('ethereum-mainnet')!;
  const ctx = { chainType: network.chainType, chainId: network.chainId, family: network.family, nativeSymbol: network.nativeSymbol, nativeDecimals: network.nativeDecimals };
  const base = parseEvmPayload([evmBlockItem()], ctx).blocks[0].transactions;
  const secretKey = randomBytes(32).toString('hex');
  const hookSecret = `hook-${randomBytes(6).toString('hex')}`;
  const appId = `whk-${randomBytes(4).toString('hex')}`;
  // Verified as a receiver would, with the Standard Webhooks library; slow (up to 100 pushes go
  // in one POST), so the kill lands in the middle of the stream.
  const receiver = new WebhookReceiver({ check: (body, headers) => new Webhook(hookSecret, { format: 'raw' }).verify(body, headers as Record<string, string>) });
  receiver.delayMs = 400;
  const deliveries = () => receiver.requests.map((r) => ({ id: String(r.headers['webhook-id']), hashes: (JSON.parse(r.body) as Json[]).map((t) => t.txHash) }));
  let db: Knex;
  let prefix = '';
  const procs: RunningProcess[] = [];

  const startDispatcher = async () => {
    const ops = await freePort();
    const p = spawnTs('apps/webhook-dispatcher/src/main.ts', {
      KAFKA_BROKERS: env.kafkaBrokers.join(','),
      KAFKA_TOPIC_PREFIX: prefix,
      DATABASE_URL: env.databaseUrl,
      OPS_PORT: String(ops),
      WEBHOOK_SECRET_KEY: secretKey,
      ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true',
      WEBHOOK_DISPATCHER_GROUP: `${prefix}dispatcher`,
      WEBHOOK_SESSION_TIMEOUT_MS: '6000',
      LOG_LEVEL: 'warn',
    });
    procs.push(p);
    await waitReady(p, ops, 60_000);
  };

  before(async () => {
    db = createDb({ url: env.databaseUrl, poolMax: 2 });
    await new ApiKeyRepository(db).createApp(appId, appId);
    await receiver.start();
    await db('tx.app_configs').insert({
      app_id: appId,
      enable_webhook: true,
      webhook_url: receiver.url,
      webhook_secret_enc: new SecretBox(secretKey).seal(hookSecret),
    });
    prefix = uniquePrefix('whk');
    await createRegistryTopics(prefix, [TOPICS.txPush]);
  });

  after(async () => {
    for (const p of procs) await stopProcess(p);
    await receiver.stop();
    await db?.destroy();
  });

  it('delivers every push after a restart; every POST is named by the pushes it carries', async () => {
    const pushes: TxPushMessage[] = Array.from({ length: 400 }, (_, i) => {
      const tx = { ...base[i % base.length], tx_hash: `0x${randomBytes(32).toString('hex')}` };
      return topicMessage(TOPICS.txPush, { message_id: randomBytes(16).toString('hex'), app_id: appId, tx_id: String(2_000_000 + i), network: network.network, listen_address: [tx.sender!], is_reorg_resend: false, orphaned: false, ws: false, webhook: true, matched_at: Date.now(), tx });
    });
    await produceJson(prefix + TOPICS.txPush.name, pushes.map((p) => ({ key: p.app_id, value: p })));
    await startDispatcher();
    const deliveredCount = () => new Set(deliveries().flatMap((r) => r.hashes)).size;
    await waitFor(() => receiver.requests.length >= 1, { timeoutMs: 60_000, what: 'some deliveries before the kill' });
    const victim = procs.pop()!;
    victim.kill('SIGKILL');
    await victim.exited;
    const atKill = deliveredCount();
    await startDispatcher();
    const wanted = new Map(pushes.map((p) => [p.tx.tx_hash, p.message_id]));
    await waitFor(() => deliveredCount() >= wanted.size, { timeoutMs: 120_000, what: `all ${wanted.size} pushes delivered` });
    expect(atKill, 'the kill came before the end').to.be.below(pushes.length);
    const delivered = deliveries().flatMap((r) => r.hashes);
    expect([...new Set(delivered)].sort()).to.deep.equal([...wanted.keys()].sort());
    // Each POST names its batch by the pushes it holds, so the same batch sent again has the same id.
    for (const r of deliveries()) expect(r.id).to.equal(batchId(r.hashes.map((h) => wanted.get(h)!)));
  });
});
