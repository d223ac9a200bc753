import { randomBytes, randomInt } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { createDb, type Knex } from '@chainpipe/db';
import { SecretBox } from '@chainpipe/runtime';
import {
  AppProcess,
  WebhookReceiver,
  bitcoinBlockItem,
  connectWs,
  createAppWithKey,
  createRegistryTopics,
  evmBlockItem,
  freePort,
  randomSuffix,
  rebaseBlock,
  streamerBody,
  testEnv,
  uniquePrefix,
  waitFor,
  type FixtureFamily,
  type TestWsClient,
} from '@chainpipe/testing';

type Json = any;

const TRANSFER_TOPIC = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';
const topicAddress = (t: string) => '0x' + t.slice(-40).toLowerCase();

/**
 * Transactions of a raw EVM block (block with receipts) that involve one of `addresses`, read
 * straight from the fixture: sent by one or to one (whatever the call and its outcome), and
 * ERC-20 Transfer logs from or to one.
 */
function evmInvolving(item: Json, addresses: ReadonlySet<string>): Set<string> {
  const out = new Set<string>();
  for (const t of item.block.transactions) {
    if (addresses.has(t.from.toLowerCase()) || (t.to && addresses.has(t.to.toLowerCase()))) out.add(t.hash);
  }
  for (const r of item.receipts) {
    for (const log of r.logs) {
      if (log.topics[0] === TRANSFER_TOPIC && log.topics.length === 3 && (addresses.has(topicAddress(log.topics[1])) || addresses.has(topicAddress(log.topics[2])))) out.add(r.transactionHash);
    }
  }
  return out;
}

/** Transactions of a raw Bitcoin block paying one of `addresses` (an output to it). */
function bitcoinPaying(item: Json, addresses: ReadonlySet<string>): Set<string> {
  return new Set(item.tx.filter((t: Json) => t.vout.some((o: Json) => addresses.has(o.scriptPubKey.address))).map((t: Json) => t.txid as string));
}

/**
 * The address-monitoring stack as deploy/k8s/apps runs it: two copies each of chain-ingest,
 * chain-parser, tx-matcher, tx-gateway and webhook-dispatcher as real processes, sharing their
 * consumer groups, on the test broker, Postgres and Redis. Real fixture blocks (Ethereum and two
 * Bitcoin blocks, under run-specific heights and hashes) are streamed to either ingest copy, as
 * a load balancer would; mid-stream one copy of every app is killed (SIGKILL). What must arrive
 * is computed from the raw blocks and the monitored addresses: every such transaction reaches a
 * WebSocket client of each gateway copy (the one whose copy died reconnects to the other, as
 * behind a load balancer) and the webhook receiver, a webhook at most twice (once more after the
 * dispatcher's kill: at least once), and a connection never gets the same push twice. A second
 * application monitoring only the Bitcoin addresses gets exactly its own pushes on its client.
 */
describe('replicas: two copies of every address-monitoring app, one of each killed mid-stream', function () {
  this.timeout(240_000);
  const env = testEnv();
  const prefix = uniquePrefix('replicas');
  const secret = randomBytes(12).toString('hex');
  const webhookKey = randomBytes(32).toString('hex');
  const receiver = new WebhookReceiver();
  const copies = new Map<string, AppProcess[]>();
  const clients: TestWsClient[] = [];
  let db: Knex;
  let ingestUrls: string[] = [];
  let gatewayWs: string[] = [];
  let app = { id: '', key: '' };
  /** A second application, monitoring only the Bitcoin addresses, over WebSocket only: the copies route each push to its own application. */
  let other = { id: '', key: '' };

  const evm = evmBlockItem();
  const btc = [bitcoinBlockItem(766391), bitcoinBlockItem(766393)];
  // Monitored: three ERC-20 receivers and two plain-payment receivers of the Ethereum block, and
  // two paid addresses of each Bitcoin block (outputs of ordinary transactions). The Ethereum ones
  // are plain accounts: no contract called or emitting logs, named by no log but a Transfer, not
  // the zero address; so what involves them is what `evmInvolving` reads.
  const evmAddresses = (() => {
    const emitters = new Set<string>(evm.receipts.flatMap((r: Json) => r.logs.map((l: Json) => l.address.toLowerCase())));
    const called = new Set<string>(evm.block.transactions.filter((t: Json) => t.input !== '0x' && t.to).map((t: Json) => t.to.toLowerCase()));
    const inOtherLogs = new Set<string>();
    for (const r of evm.receipts) for (const l of r.logs) if (!(l.topics[0] === TRANSFER_TOPIC && l.topics.length === 3)) for (const t of l.topics.slice(1)) inOtherLogs.add(topicAddress(t));
    const plain = (a: string) => !/^0x0{40}$/.test(a) && !emitters.has(a) && !called.has(a) && !inOtherLogs.has(a);
    const tokens = [...new Set<string>(evm.receipts.flatMap((r: Json) => r.logs.filter((l: Json) => l.topics[0] === TRANSFER_TOPIC && l.topics.length === 3).map((l: Json) => topicAddress(l.topics[2]))))].filter(plain).slice(0, 3);
    const payees = evm.block.transactions.filter((t: Json) => BigInt(t.value) > 0n && t.input === '0x' && t.to && plain(t.to.toLowerCase())).slice(0, 2).map((t: Json) => t.to.toLowerCase() as string);
    return new Set<string>([...tokens, ...payees]);
  })();
  const btcAddresses = new Set<string>(btc.flatMap((b) => b.tx.filter((t: Json) => !t.vin[0]?.coinbase).slice(0, 2).map((t: Json) => t.vout[0].scriptPubKey.address as string)));

  /** Every block streamed, and the transactions of it due to the application. */
  const streamed: { network: string; height: number; due: Set<string>; all: Set<string> }[] = [];

  const start = (name: string, entry: string, envOf: (i: number) => Promise<Record<string, string>>) =>
    Promise.all([0, 1].map(async (i) => AppProcess.start(entry, await envOf(i), { readyTimeoutMs: 120_000 }))).then((procs) => copies.set(name, procs));

  before(async function () {
    this.timeout(180_000);
    db = createDb({ url: env.databaseUrl, poolMax: 2 });
    app = await createAppWithKey(db, { id: `replicas-${randomBytes(4).toString('hex')}` });
    await receiver.start();
    // A push is sent again only after an hour unacknowledged: what a client gets twice is a replay.
    await db('tx.app_configs').insert({ app_id: app.id, enable_ws: true, enable_webhook: true, webhook_url: receiver.url, webhook_secret_enc: new SecretBox(webhookKey).seal('replicas-hook'), ws_ack_resend_interval_seconds: 3600 });
    other = await createAppWithKey(db, { id: `replicas-other-${randomBytes(4).toString('hex')}` });
    await db('tx.app_configs').insert({ app_id: other.id, enable_ws: true, enable_webhook: false, ws_ack_resend_interval_seconds: 3600 });
    await db('tx.monitored_addresses').insert([
      ...[...evmAddresses].map((address) => ({ app_id: app.id, chain_type: 'ethereum', address })),
      ...[...btcAddresses].map((address) => ({ app_id: app.id, chain_type: 'bitcoin', address })),
      ...[...btcAddresses].map((address) => ({ app_id: other.id, chain_type: 'bitcoin', address })),
    ]);
    await createRegistryTopics(prefix);
    const common = {
      KAFKA_BROKERS: env.kafkaBrokers.join(','),
      KAFKA_TOPIC_PREFIX: prefix,
      DATABASE_URL: env.databaseUrl,
      DB_POOL_MAX: '4',
      REDIS_URL: env.redisUrl,
      REDIS_KEY_PREFIX: `${prefix}redis:`,
      LOG_LEVEL: 'warn',
    };
    const ports = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
    ingestUrls = ports.slice(0, 2).map((p) => `http://127.0.0.1:${p}`);
    gatewayWs = ports.slice(2).map((p) => `ws://127.0.0.1:${p}/tx/api/v1/transaction/ws`);
    // The session timeouts at their floor: a killed copy's partitions move within seconds.
    await Promise.all([
      start('chain-ingest', 'apps/chain-ingest/src/main.ts', async (i) => ({ ...common, STREAM_SECRET: secret, PORT: String(ports[i]) })),
      start('chain-parser', 'apps/chain-parser/src/main.ts', async () => ({ ...common, CHAIN_PARSER_GROUP: `${prefix}parser`, CHAIN_PARSER_SESSION_TIMEOUT_MS: '6000' })),
      start('tx-matcher', 'apps/tx-matcher/src/main.ts', async () => ({ ...common, TX_MATCHER_GROUP: `${prefix}matcher`, TX_MATCHER_CHANGES_GROUP_PREFIX: `${prefix}changes`, TX_MATCHER_SESSION_TIMEOUT_MS: '6000' })),
      start('tx-gateway', 'apps/tx-gateway/src/main.ts', async (i) => ({ ...common, PORT: String(ports[2 + i]), WEBHOOK_SECRET_KEY: webhookKey, CHAIN_RPC_DEFAULT_BASE: 'http://127.0.0.1:9/rpc', TX_GATEWAY_PUSH_GROUP: `${prefix}push`, TX_GATEWAY_SESSION_TIMEOUT_MS: '6000' })),
      start('webhook-dispatcher', 'apps/webhook-dispatcher/src/main.ts', async () => ({ ...common, WEBHOOK_SECRET_KEY: webhookKey, ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true', WEBHOOK_DISPATCHER_GROUP: `${prefix}dispatcher`, WEBHOOK_SESSION_TIMEOUT_MS: '6000' })),
    ]);
  });

  afterEach(function () {
    if (this.currentTest?.state !== 'failed') return;
    for (const [name, procs] of copies) {
      procs.forEach((p, i) => {
        const file = path.join(os.tmpdir(), `replicas-${name}-${i}.log`);
        writeFileSync(file, p.process.output());
        console.log(`    ${name} #${i} output: ${file}`);
      });
    }
  });

  after(async () => {
    await Promise.all(clients.map((c) => c.close()));
    const codes: string[] = [];
    for (const [name, procs] of copies) for (const [i, p] of procs.entries()) if (p.process.proc.exitCode === null && p.process.proc.signalCode === null) codes.push(`${name}#${i}:${await p.stop()}`);
    await receiver.stop();
    await db?.destroy();
    expect(codes.filter((c) => !c.endsWith(':0')), 'the copies still running shut down cleanly').to.deep.equal([]);
  });

  /** Posts a block to the ingest copies in turn until one acknowledges it, as a streamer behind a load balancer retries. */
  async function stream(family: FixtureFamily, item: Json, height: number, turn: number): Promise<void> {
    const network = family === 'evm' ? 'ethereum-mainnet' : 'bitcoin-mainnet';
    const rebased = rebaseBlock(family, item, height, randomSuffix());
    const body = streamerBody([rebased.item], { network, dataset: family === 'evm' ? 'block_with_receipts' : 'block', start: height });
    for (let attempt = 0; attempt < 40; attempt++) {
      const url = ingestUrls[(turn + attempt) % ingestUrls.length];
      const status = await fetch(`${url}/stream`, { method: 'POST', headers: { 'content-secret-x': secret, 'cl-stream-network': network, 'content-type': 'application/octet-stream' }, body, signal: AbortSignal.timeout(20_000) })
        .then((r) => r.arrayBuffer().then(() => r.status))
        .catch(() => 0);
      if (status === 200) {
        const due = family === 'evm' ? evmInvolving(rebased.item, evmAddresses) : bitcoinPaying(rebased.item, btcAddresses);
        const all = new Set<string>(family === 'evm' ? rebased.item.block.transactions.map((t: Json) => t.hash) : rebased.item.tx.map((t: Json) => t.txid));
        streamed.push({ network, height, due, all });
        return;
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(`no ingest copy acknowledged ${network} block ${height}`);
  }

  const pushed = (c: TestWsClient) => c.received.filter((m: Json) => m.type === 'transaction').map((m: Json) => ({ id: m.id as string, hash: m.data.txhash as string }));
  const hooked = () => receiver.bodies<Json[]>().flatMap((b) => b.map((t) => t.txHash as string));

  it('delivers every due transaction to a client of either gateway copy and to the webhook receiver, through a SIGKILL of one copy of each app', async () => {
    const open = async (url: string, key = app.key) => {
      const c = await connectWs(url, { 'x-api-key': key, 'x-resendduration': '600' });
      clients.push(c);
      await c.next((m) => m.type === 'connected');
      return c;
    };
    // One client on each gateway copy; the first one's copy is the one killed.
    const [onKilled, onSurvivor] = [await open(gatewayWs[0]), await open(gatewayWs[1])];
    const gone = new Promise<void>((resolve) => onKilled.ws.once('close', () => resolve()));
    const otherApp = await open(gatewayWs[1], other.key);

    // Heights of the run, spaced so no two streamed blocks are parent and child.
    const base = { evm: 3_000_000_000 + randomInt(1_000_000_000), utxo: 3_000_000_000 + randomInt(1_000_000_000) };
    const rounds = 6;
    let turn = 0;
    for (let r = 0; r < rounds; r++) {
      if (r === 2) {
        // Mid-stream: one copy of every app dies at once.
        await waitFor(() => hooked().length > 0 && pushed(onSurvivor).length > 0, { timeoutMs: 90_000, what: 'the first deliveries before the kill' });
        await Promise.all([...copies.values()].map((procs) => procs[0].kill('SIGKILL')));
      }
      await stream('evm', evm, base.evm + r * 10, turn++);
      for (const [i, b] of btc.entries()) await stream('utxo', b, base.utxo + r * 20 + i * 10, turn++);
    }
    await gone;
    // The client of the dead copy reconnects to the other, as behind a load balancer, and gets its resend window.
    const reconnected = await open(gatewayWs[1]);

    const due = new Set(streamed.flatMap((s) => [...s.due]));
    const inBlocks = new Set(streamed.flatMap((s) => [...s.all]));
    expect(streamed).to.have.length(rounds * 3);
    expect(due.size, 'the monitored addresses are in every streamed block').to.be.greaterThan(rounds * 3);
    const missing = (seen: Iterable<string>) => {
      const s = new Set(seen);
      return [...due].filter((h) => !s.has(h));
    };
    const killedClientSaw = () => [...pushed(onKilled), ...pushed(reconnected)].map((p) => p.hash);
    const dueOther = new Set(streamed.filter((s) => s.network === 'bitcoin-mainnet').flatMap((s) => [...s.due]));
    await waitFor(() => [...dueOther].every((h) => pushed(otherApp).some((p) => p.hash === h)), { timeoutMs: 120_000, intervalMs: 500, what: "every Bitcoin transaction on the other application's client" });
    await waitFor(() => missing(hooked()).length === 0 && missing(pushed(onSurvivor).map((p) => p.hash)).length === 0 && missing(killedClientSaw()).length === 0, {
      timeoutMs: 120_000,
      intervalMs: 500,
      what: () => `every due transaction delivered (missing: webhook ${missing(hooked()).length}, survivor's client ${missing(pushed(onSurvivor).map((p) => p.hash)).length}, reconnected client ${missing(killedClientSaw()).length} of ${due.size})`,
    });

    // Nothing else: every channel got exactly the due transactions.
    expect([...new Set(pushed(otherApp).map((p) => p.hash))].filter((h) => !dueOther.has(h)), "the other application's client: only its own transactions").to.deep.equal([]);
    for (const [label, hashes] of [['webhook', hooked()], ['survivor', pushed(onSurvivor).map((p) => p.hash)], ['reconnected', killedClientSaw()]] as const) {
      expect(hashes.filter((h) => !inBlocks.has(h)), `${label}: only transactions of the streamed blocks`).to.deep.equal([]);
      expect([...new Set(hashes)].filter((h) => !due.has(h)), `${label}: only due transactions`).to.deep.equal([]);
    }
    // A connection never gets one push twice (duplicates come only with a reconnect's resend).
    for (const [label, c] of [['survivor', onSurvivor], ['killed copy', onKilled], ['reconnected', reconnected], ['other application', otherApp]] as const) {
      const ids = pushed(c).map((p) => p.id);
      expect(ids.length - new Set(ids).size, `${label}: a push twice on one connection`).to.equal(0);
    }
    // At least once: a webhook comes again only for what the killed dispatcher had not committed, at most once more.
    const counts = new Map<string, number>();
    for (const h of hooked()) counts.set(h, (counts.get(h) ?? 0) + 1);
    const twice = [...counts].filter(([, n]) => n > 1);
    expect(twice.filter(([, n]) => n > 2), 'no webhook more than twice').to.deep.equal([]);
    console.log(`      ${due.size} due transactions in ${streamed.length} blocks; webhooks: ${hooked().length} deliveries, ${twice.length} transactions twice; WebSocket: ${pushed(reconnected).length} resent after the reconnect`);
  });
});
