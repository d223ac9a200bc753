import { randomBytes, randomInt } from 'node:crypto';
import { expect } from 'chai';
import { networkByName } from '@chainpipe/chains';
import { TOPICS, type ChainTxMessage, type TxPushMessage } from '@chainpipe/contracts';
import { ApiKeyRepository, createDb, type Knex } from '@chainpipe/db';
import type { NormalizedTx } from '@chainpipe/tx-parsers';
import {
  topicMessage,
  collectTopic,
  committedOffset,
  createRegistryTopics,
  evmBlockItem,
  freePort,
  parseFixture,
  parsePrometheusText,
  produceJson,
  randomSuffix,
  rebaseBlock,
  spawnTs,
  stopProcess,
  testEnv,
  testKafka,
  tronBlockItem,
  uniquePrefix,
  waitFor,
  waitReady,
  type RunningProcess,
  type TopicCollector,
} from '@chainpipe/testing';

const ETH = networkByName('ethereum-mainnet')!;
const TRON = networkByName('tron-mainnet')!;

/** The EVM fixture block under a fresh height and fresh hashes: new transactions, same parties. */
function freshEvmBlock(): NormalizedTx[] {
  const r = rebaseBlock('evm', evmBlockItem(), 3_000_000_000 + randomInt(1_000_000_000), randomSuffix());
  return parseFixture('evm', r.item, ETH, r.height).transactions;
}

let nextId = 1;
const chainTx = (tx: NormalizedTx, network: string, extra: Partial<ChainTxMessage> = {}) => ({
  key: `${tx.chain_type}:${tx.chain_id}:${tx.tx_hash}`,
  value: topicMessage(TOPICS.chainTx, { id: String(nextId++), network, is_reorg_resend: false, tx, ...extra }),
});

describe('tx-matcher (real process, Kafka, Postgres)', function () {
  this.timeout(120_000);
  const env = testEnv();
  let db: Knex;
  let prefix: string;
  let pushes: TopicCollector;
  const procs: RunningProcess[] = [];
  const appA = `mA-${randomBytes(4).toString('hex')}`;
  const appB = `mB-${randomBytes(4).toString('hex')}`;
  const appOff = `mOff-${randomBytes(4).toString('hex')}`;
  let opsPort = 0;

  const startMatcher = async () => {
    opsPort = await freePort();
    const p = spawnTs('apps/tx-matcher/src/main.ts', {
      KAFKA_BROKERS: env.kafkaBrokers.join(','),
      KAFKA_TOPIC_PREFIX: prefix,
      DATABASE_URL: env.databaseUrl,
      OPS_PORT: String(opsPort),
      TX_MATCHER_GROUP: `${prefix}matcher`,
      TX_MATCHER_MAX_RECORDS_PER_CALL: '25',
      TX_MATCHER_SESSION_TIMEOUT_MS: '6000',
      TX_MATCHER_RESYNC_INTERVAL_MS: '1500',
      LOG_LEVEL: 'warn',
    });
    procs.push(p);
    await waitReady(p, opsPort);
    return p;
  };
  const indexSize = async () => {
    const text = await (await fetch(`http://127.0.0.1:${opsPort}/metrics`)).text();
    return parsePrometheusText(text).samples.find((s) => s.name === 'chainpipe_matcher_index_addresses')?.value;
  };
  const pushesOf = (appId: string): TxPushMessage[] =>
    pushes.messages.filter((m) => m.key?.toString() === appId).map((m) => JSON.parse(m.value!.toString()) as TxPushMessage);
  const monitor = (appId: string, chainType: string, addresses: string[]) =>
    db('tx.monitored_addresses').insert(addresses.map((address) => ({ app_id: appId, chain_type: chainType, address }))).onConflict().ignore();
  const publishChange = (appId: string, chainType: string, adds: string[], removes: string[]) =>
    produceJson(prefix + TOPICS.addressesChanges.name, [{ key: appId, value: { app_id: appId, chain_type: chainType, adds, removes, changed_at: Date.now() } }]);

  /**
   * Publishes fresh copies of `tx` (new hashes) until one is pushed to `appId`: the index has
   * taken in a change once a transaction only that change matches is pushed. The index size
   * cannot tell, as suites running beside this one add monitored addresses of their own.
   */
  const untilPushed = async (appId: string, tx: NormalizedTx, what: string) => {
    const sent = new Set<string>();
    await waitFor(
      async () => {
        const copy = { ...tx, tx_hash: tx.tx_hash.slice(0, -6) + randomSuffix() };
        sent.add(copy.tx_hash);
        await produceJson(prefix + TOPICS.chainTx.name, [chainTx(copy, TRON.network)]);
        return pushesOf(appId).some((p) => sent.has(p.tx.tx_hash));
      },
      { intervalMs: 500, what },
    );
  };
  /** Sum of the end offsets of a topic's partitions: how many records it holds. */
  const topicEnd = async (topic: string) => {
    const admin = testKafka().admin();
    await admin.connect();
    try {
      return (await admin.fetchTopicOffsets(topic)).reduce((n, p) => n + Number(p.high), 0);
    } finally {
      await admin.disconnect();
    }
  };
  /**
   * Waits until the matcher committed everything published to chain.tx.v1 (so its pushes are
   * durable) and the collector read every push: absence can then be asserted without sleeping.
   */
  const settled = async () => {
    const input = await topicEnd(prefix + TOPICS.chainTx.name);
    await waitFor(async () => (await committedOffset(`${prefix}matcher`, prefix + TOPICS.chainTx.name)) === input, { timeoutMs: 30_000, what: 'matcher caught up' });
    const output = await topicEnd(prefix + TOPICS.txPush.name);
    await waitFor(() => pushes.messages.length >= output, { what: `collector read ${output} pushes` });
  };

  before(async () => {
    db = createDb({ url: env.databaseUrl, poolMax: 2 });
    prefix = uniquePrefix('matcher');
    await createRegistryTopics(prefix, [TOPICS.chainTx, TOPICS.addressesChanges, TOPICS.txPush]);
    const keys = new ApiKeyRepository(db);
    for (const app of [appA, appB, appOff]) await keys.createApp(app, app);
    await db('tx.app_configs').insert({ app_id: appOff, is_active: false });
    await db('tx.app_configs').insert({ app_id: appB, enable_ws: true, enable_webhook: true, webhook_url: 'https://hooks.example.com/x' });
    pushes = await collectTopic(prefix + TOPICS.txPush.name);
  });

  after(async () => {
    for (const p of procs) await stopProcess(p);
    await pushes.stop();
    await db('core.apps').whereIn('app_id', [appA, appB, appOff]).del();
    await db.destroy();
  });

  it('one push per application and transaction with every monitored party; other applications and muted ones get nothing', async () => {
    const block = freshEvmBlock();
    // A token transfer: sender, token sender and token receiver are three parties of one transaction.
    const token = block.find((t) => t.token_transfers.length === 1 && t.token_transfers[0].from_address !== t.sender && t.token_transfers[0].to_address !== t.sender)!;
    const parties = [token.sender!, token.token_transfers[0].from_address!, token.token_transfers[0].to_address!];
    const other = block.find((t) => t.transfer_type === 'native' && !parties.includes(t.sender!) && !parties.includes(t.receiver!))!;
    await monitor(appA, 'ethereum', parties);
    await monitor(appB, 'ethereum', [other.receiver!]);
    await monitor(appOff, 'ethereum', [token.sender!]);
    // The same address on another chain type must not match.
    await monitor(appB, 'bsc', [token.sender!]);
    await startMatcher();

    await produceJson(prefix + TOPICS.chainTx.name, block.map((tx) => chainTx(tx, ETH.network)));
    await settled();
    // Other transactions of the block may touch these parties too: each is pushed once, with
    // the parties it touches.
    const a = pushesOf(appA);
    expect(new Set(a.map((p) => p.tx.tx_hash)).size).to.equal(a.length);
    const mine = a.find((p) => p.tx.tx_hash === token.tx_hash)!;
    expect(mine.listen_address).to.deep.equal([...new Set(parties)].sort());
    expect(mine).to.include({ ws: true, webhook: false, is_reorg_resend: false, orphaned: false });
    expect(a.every((p) => p.listen_address.every((x) => parties.includes(x)))).to.equal(true);
    const b = pushesOf(appB);
    expect(b.map((p) => p.tx.tx_hash)).to.include(other.tx_hash);
    expect(b.every((p) => p.ws && p.webhook && p.listen_address.join() === other.receiver)).to.equal(true);
    expect(pushesOf(appOff)).to.deep.equal([]);
  });

  it('orphaned and reorg re-sent transactions carry their flags and get their own message ids', async () => {
    // Any monitored party that sent a transaction (the first push may have matched a token party only).
    const parties = pushesOf(appA).flatMap((p) => p.listen_address);
    const tx = freshEvmBlock().find((t) => parties.includes(t.sender!))!;
    const before = pushesOf(appA).length;
    await produceJson(prefix + TOPICS.chainTx.name, [chainTx(tx, ETH.network), chainTx(tx, ETH.network, { is_reorg_resend: true }), chainTx(tx, ETH.network, { orphaned: true })]);
    await waitFor(() => pushesOf(appA).length >= before + 3, { what: 'three pushes' });
    const got = pushesOf(appA).slice(before);
    expect(got.map((p) => [p.is_reorg_resend, p.orphaned])).to.deep.equal([[false, false], [true, false], [false, true]]);
    expect(new Set(got.map((p) => p.message_id)).size).to.equal(3);
  });

  it('an address added while blocks flow is matched from the next block on; a removed one stops', async () => {
    const tronTxs = parseFixture('tvm', tronBlockItem(), TRON).transactions;
    const target = tronTxs.find((t) => t.transfer_type === 'native')!;
    // Another transfer whose parties are not the target's: its sender marks when a later change is in.
    const other = tronTxs.find((t) => t.transfer_type === 'native' && ![target.sender, target.receiver].includes(t.sender) && ![target.sender, target.receiver].includes(t.receiver))!;
    await produceJson(prefix + TOPICS.chainTx.name, [chainTx(target, TRON.network)]);
    await settled();
    // Added through the table and its change notice, as tx-gateway does.
    await monitor(appA, 'tron', [target.receiver!]);
    await publishChange(appA, 'tron', [target.receiver!], []);
    await untilPushed(appA, target, 'a push of a next block once the address is in');
    expect(pushesOf(appA).some((p) => p.tx.tx_hash === target.tx_hash), 'the block before the add').to.equal(false);

    await db('tx.monitored_addresses').where({ app_id: appA, chain_type: 'tron', address: target.receiver! }).del();
    await publishChange(appA, 'tron', [], [target.receiver!]);
    // The marker comes after the removal, in the table and on the application's (ordered) partition
    // of the change notices: once it is matched, the removal is applied too.
    await monitor(appA, 'tron', [other.sender!]);
    await publishChange(appA, 'tron', [other.sender!], []);
    await untilPushed(appA, other, 'a push for the marker added after the removal');
    const after = { ...target, tx_hash: target.tx_hash.slice(0, -6) + randomSuffix() };
    await produceJson(prefix + TOPICS.chainTx.name, [chainTx(after, TRON.network)]);
    await settled();
    expect(pushesOf(appA).some((p) => p.tx.tx_hash === after.tx_hash), 'removed address').to.equal(false);
  });

  it('a missed change notice is repaired by the next periodic reload', async () => {
    const tronTxs = parseFixture('tvm', tronBlockItem(), TRON).transactions;
    const target = tronTxs.filter((t) => t.transfer_type === 'native')[1];
    await monitor(appB, 'tron', [target.sender!]); // no change notice at all
    await untilPushed(appB, target, 'a push once the reload picked the row up');
  });

  it('SIGKILL mid-load: after a restart every push is there, replays carry the same message id', async () => {
    const senders = new Set<string>();
    const blocks = Array.from({ length: 12 }, () => freshEvmBlock());
    for (const t of blocks[0]) if (t.sender) senders.add(t.sender);
    await monitor(appA, 'ethereum', [...senders]);
    await publishChange(appA, 'ethereum', [...senders], []);
    await waitFor(async () => (await indexSize())! >= senders.size, { what: 'senders indexed' });
    const before = new Set(pushesOf(appA).map((p) => p.message_id));
    const expectedHashes = new Set(blocks.flatMap((b) => b.filter((t) => t.sender).map((t) => t.tx_hash)));
    await produceJson(prefix + TOPICS.chainTx.name, blocks.flatMap((b) => b.map((tx) => chainTx(tx, ETH.network))));
    await waitFor(() => pushesOf(appA).length - before.size >= 50, { what: 'some pushes before the kill' });
    const victim = procs.pop()!;
    victim.kill('SIGKILL');
    await victim.exited;
    await startMatcher();
    await waitFor(
      () => {
        const seen = new Set(pushesOf(appA).map((p) => p.tx.tx_hash));
        return [...expectedHashes].every((h) => seen.has(h));
      },
      { timeoutMs: 60_000, what: `all ${expectedHashes.size} transactions pushed` },
    );
    const idsByHash = new Map<string, Set<string>>();
    for (const p of pushesOf(appA)) {
      if (!expectedHashes.has(p.tx.tx_hash)) continue;
      idsByHash.set(p.tx.tx_hash, (idsByHash.get(p.tx.tx_hash) ?? new Set()).add(p.message_id));
    }
    // One message id per transaction however often it was pushed.
    expect([...idsByHash.values()].every((ids) => ids.size === 1)).to.equal(true);
    expect(idsByHash.size).to.equal(expectedHashes.size);
  });
});
