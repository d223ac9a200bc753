import { randomBytes, randomInt } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { keccak_256 } from '@noble/hashes/sha3';
import { expect } from 'chai';
import { TOPICS } from '@chainpipe/contracts';
import { createDb, type Knex } from '@chainpipe/db';
import { SecretBox } from '@chainpipe/runtime';
import {
  WebhookReceiver,
  connectWs,
  createAppWithKey,
  createRegistryTopics,
  evmDatasetItems,
  freePort,
  collectTopic,
  groupCaughtUp,
  randomSuffix,
  rebaseBlock,
  spawnTs,
  stopProcess,
  streamerBody,
  testEnv,
  uniquePrefix,
  waitFor,
  waitReady,
  type RunningProcess,
  type TestWsClient,
} from '@chainpipe/testing';

type Json = any;

/** EIP-55: a hex letter is upper case when the matching nibble of keccak-256(lowercase hex) is 8 or more. */
function checksummed(address: string): string {
  const hex = address.slice(2).toLowerCase();
  const hash = Buffer.from(keccak_256(hex)).toString('hex');
  return '0x' + [...hex].map((c, i) => (parseInt(hash[i], 16) >= 8 ? c.toUpperCase() : c)).join('');
}

/**
 * The rules of what is pushed, on the real stack (chain-ingest, chain-parser, tx-matcher,
 * tx-gateway, webhook-dispatcher as processes; real Kafka, Postgres, Redis) with a stand-in
 * chain node for the gateway's origin look-ups:
 * - a transaction fetched by GET /tx/api/v1/transactions/{hash} before its block is streamed is
 *   pushed (the fetch goes through chain-parser's store and publish, it does not silence the push);
 * - `unsubscribe` stops an address on a connection that follows every address, without
 *   `chain_type` and given in its checksummed form too, and removing the last explicit
 *   subscription never widens the connection back to every address;
 * - a record a later delivery only enriched (traces: internal transfers, no status change) is not
 *   pushed again, over WebSocket or by webhook, to an application that had it; an application
 *   monitoring a party only the traces show gets it once.
 * The block is eth-mainnet 13998626 under a fresh height and hashes, so no other run's rows match.
 */
describe('push rules on the real stack: origin fetch, unsubscribe, enrichment', function () {
  this.timeout(240_000);
  const env = testEnv();
  const secret = randomBytes(12).toString('hex');
  const secretKey = '42'.repeat(32);
  const procs: RunningProcess[] = [];
  const clients: TestWsClient[] = [];
  let db: Knex;
  let ingest = '';
  let gateway = '';
  let prefix = '';

  const items = evmDatasetItems(13998626);
  const height = 3_000_000_000 + randomInt(1_000_000_000);
  const rebased = rebaseBlock('evm', items.all, height, randomSuffix());
  const block = rebased.item.block;
  const receipts: Json[] = rebased.item.receipts;
  const status = new Map<string, string>(receipts.map((r) => [r.transactionHash, r.status]));

  // 0xb240b922… (SOURCES.md, and the merge tests): its trace has 0x74de5d4f… send wei to
  // 0xf326e4de…, an address no transaction or log of the block names otherwise. Its test streams
  // the block under a height and hashes of its own.
  const fixtureHashE = '0xb240b922161bb0aeaa5ebe67e6cf77311092bd945b9582b8deba61e2ebdde74f';
  const txE = items.block.transactions.find((t: Json) => t.hash === fixtureHashE);
  const addrE = txE.from.toLowerCase();
  const addrI = '0xf326e4de8f66a0bdc0970b79e0924e33c79f1915';
  // Plain ETH transfers that succeeded, sharing no address with each other or with 0xb240b922….
  const taken = new Set([addrE, txE.to.toLowerCase(), addrI]);
  const natives: Json[] = [];
  for (const t of block.transactions) {
    if (!(BigInt(t.value) > 0n && t.input === '0x' && status.get(t.hash) === '0x1')) continue;
    const from = t.from.toLowerCase();
    const to = t.to.toLowerCase();
    if (taken.has(from) || taken.has(to)) continue;
    taken.add(from).add(to);
    natives.push(t);
  }
  const [txN, txU] = natives;
  const addrN = txN.to.toLowerCase();
  const addrU = txU.to.toLowerCase();

  const apps = {
    fetched: { id: `pushF-${randomBytes(4).toString('hex')}`, key: '', hook: new WebhookReceiver() },
    unsub: { id: `pushU-${randomBytes(4).toString('hex')}`, key: '' },
    enriched: { id: `pushE-${randomBytes(4).toString('hex')}`, key: '', hook: new WebhookReceiver() },
    internal: { id: `pushI-${randomBytes(4).toString('hex')}`, key: '' },
  };

  /** A JSON-RPC node answering from the rebased block, as a real one would. */
  const calls: string[] = [];
  const node = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const msg = JSON.parse(body);
      calls.push(msg.method);
      const result =
        msg.method === 'eth_getTransactionByHash'
          ? (block.transactions.find((t: Json) => t.hash === msg.params[0]) ?? null)
          : msg.method === 'eth_getTransactionReceipt'
            ? (receipts.find((r) => r.transactionHash === msg.params[0]) ?? null)
            : msg.method === 'eth_getBlockByNumber' && msg.params[0] === block.number
              ? { ...block, transactions: msg.params[1] ? block.transactions : block.transactions.map((t: Json) => t.hash) }
              : null;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result }));
    });
  });

  const open = async (key: string) => {
    const c = await connectWs(`${gateway.replace('http', 'ws')}/tx/api/v1/transaction/ws`, { 'x-api-key': key });
    clients.push(c);
    await c.next((m) => m.type === 'connected');
    return c;
  };
  const request = (c: TestWsClient, type: string, data: unknown) => {
    const id = `${type}-${randomBytes(4).toString('hex')}`;
    c.send({ id, type, data });
    return c.next((m) => m.id === id && m.type !== 'transaction');
  };
  const pushesOf = (c: TestWsClient, hash?: string) => c.received.filter((m) => m.type === 'transaction' && (hash === undefined || m.data.txhash === hash));
  /** Acknowledges a push: it is not re-sent periodically, so any later frame of it would be a new push. */
  const ack = (c: TestWsClient, hash: string) => c.send({ id: `ack-${hash}`, type: 'transactionACK', data: { chain_type: 'ethereum', chain_id: 1, txHash: hash } });
  /** The tx.push.v1 messages of one application for one transaction, once the topic is read to its end. */
  const pushMessages = async (appId: string, hash: string) => {
    const topic = await collectTopic(`${prefix}tx.push.v1`);
    try {
      return (await topic.settled()).map((m) => JSON.parse(m.value!.toString()) as Json).filter((m) => m.app_id === appId && m.tx.tx_hash === hash);
    } finally {
      await topic.stop();
    }
  };
  const seen = (c: TestWsClient, hash: string, what: string) => waitFor(() => pushesOf(c, hash)[0], { timeoutMs: 60_000, intervalMs: 20, what });
  const hooksOf = (r: WebhookReceiver, hash: string) => r.requests.filter((q) => (JSON.parse(q.body) as Json[]).some((t) => t.txHash === hash));
  const post = async (elements: Json[], dataset: string, start = height) => {
    const res = await fetch(`${ingest}/stream`, {
      method: 'POST',
      headers: { 'content-secret-x': secret, 'cl-stream-network': 'ethereum-mainnet', 'content-type': 'application/octet-stream' },
      body: streamerBody(elements, { network: 'ethereum-mainnet', dataset, start }),
    });
    expect(res.status).to.equal(200);
  };
  /** Waits until every stage has consumed everything before it: nothing is left on its way. */
  const drained = async () => {
    await groupCaughtUp(`${prefix}parser`, `${prefix}chain.raw.v1`, 60_000);
    await groupCaughtUp(`${prefix}fetched`, `${prefix}chain.fetched.v1`, 60_000);
    await groupCaughtUp(`${prefix}matcher`, `${prefix}chain.tx.v1`, 60_000);
    await groupCaughtUp(`${prefix}dispatcher`, `${prefix}tx.push.v1`, 60_000);
    await groupCaughtUp(`${prefix}push`, `${prefix}tx.push.v1`, 60_000);
  };

  before(async () => {
    db = createDb({ url: env.databaseUrl, poolMax: 2 });
    for (const app of Object.values(apps)) app.key = (await createAppWithKey(db, { id: app.id })).key;
    for (const app of [apps.fetched, apps.enriched]) {
      await app.hook.start();
      await db('tx.app_configs').insert({ app_id: app.id, enable_webhook: true, webhook_url: app.hook.url, webhook_secret_enc: new SecretBox(secretKey).seal('s') });
    }
    await db('tx.monitored_addresses').insert([
      { app_id: apps.fetched.id, chain_type: 'ethereum', address: addrN },
      { app_id: apps.unsub.id, chain_type: 'ethereum', address: addrU },
      { app_id: apps.enriched.id, chain_type: 'ethereum', address: addrE },
      { app_id: apps.internal.id, chain_type: 'ethereum', address: addrI },
    ]);
    await new Promise<void>((resolve) => node.listen(0, '127.0.0.1', resolve));

    prefix = uniquePrefix('rules');
    await createRegistryTopics(prefix, [TOPICS.chainRaw, TOPICS.chainFetched, TOPICS.chainTx, TOPICS.addressesChanges, TOPICS.txPush]);
    const common = { KAFKA_BROKERS: env.kafkaBrokers.join(','), KAFKA_TOPIC_PREFIX: prefix, DATABASE_URL: env.databaseUrl, REDIS_URL: env.redisUrl, LOG_LEVEL: 'warn' };
    const [ingestPort, ingestOps, parserOps, matcherOps, gwPort, gwOps, dispatcherOps] = await Promise.all(Array.from({ length: 7 }, () => freePort()));
    const started: Array<[RunningProcess, number]> = [
      [spawnTs('apps/chain-ingest/src/main.ts', { ...common, STREAM_SECRET: secret, PORT: String(ingestPort), OPS_PORT: String(ingestOps) }), ingestOps],
      [spawnTs('apps/chain-parser/src/main.ts', { ...common, OPS_PORT: String(parserOps), CHAIN_PARSER_GROUP: `${prefix}parser`, CHAIN_PARSER_FETCHED_GROUP: `${prefix}fetched` }), parserOps],
      [spawnTs('apps/tx-matcher/src/main.ts', { ...common, OPS_PORT: String(matcherOps), TX_MATCHER_GROUP: `${prefix}matcher` }), matcherOps],
      [
        spawnTs('apps/tx-gateway/src/main.ts', {
          ...common,
          PORT: String(gwPort),
          OPS_PORT: String(gwOps),
          WEBHOOK_SECRET_KEY: secretKey,
          REDIS_KEY_PREFIX: `${prefix}redis:`,
          TX_GATEWAY_PUSH_GROUP: `${prefix}push`,
          CHAIN_RPC_URLS: `ethereum-mainnet=http://127.0.0.1:${(node.address() as AddressInfo).port}/rpc`,
        }),
        gwOps,
      ],
      [
        spawnTs('apps/webhook-dispatcher/src/main.ts', {
          ...common,
          OPS_PORT: String(dispatcherOps),
          WEBHOOK_DISPATCHER_GROUP: `${prefix}dispatcher`,
          WEBHOOK_SECRET_KEY: secretKey,
          ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true',
        }),
        dispatcherOps,
      ],
    ];
    procs.push(...started.map(([p]) => p));
    await Promise.all(started.map(([p, ops]) => waitReady(p, ops, 180_000)));
    ingest = `http://127.0.0.1:${ingestPort}`;
    gateway = `http://127.0.0.1:${gwPort}`;
  });

  after(async () => {
    await Promise.all(clients.map((c) => c.close()));
    for (const p of procs) await stopProcess(p);
    await new Promise((resolve) => node.close(resolve));
    for (const app of [apps.fetched, apps.enriched]) await app.hook.stop();
    await db('core.apps').whereIn('app_id', Object.values(apps).map((a) => a.id)).del();
    await db.destroy();
  });

  it('a transaction fetched from the chain origin is pushed (WebSocket and webhook), and its block then pushes nothing twice', async () => {
    const f = await open(apps.fetched.key);
    const r = await fetch(`${gateway}/tx/api/v1/transactions/${txN.hash}?chain_type=ethereum&chain_id=1`, { headers: { 'x-api-key': apps.fetched.key } });
    expect(r.status).to.equal(200);
    const answer = (await r.json()) as Json;
    expect(answer.data).to.include({ txhash: txN.hash, sender: txN.from.toLowerCase(), receiver: addrN, amount: BigInt(txN.value).toString(), txStatus: 'success' });
    expect(calls).to.include('eth_getTransactionByHash');

    const push = await seen(f, txN.hash, 'the push of the fetched transaction');
    expect(push.data.listenAddress).to.deep.equal([addrN]);
    ack(f, txN.hash);
    await waitFor(() => hooksOf(apps.fetched.hook, txN.hash)[0], { timeoutMs: 60_000, what: 'the webhook of the fetched transaction' });

    // The block arrives: the fetched record already holds what block and receipts say of it.
    await post([{ block, receipts }], 'block_with_receipts');
    await drained();
    await request(f, 'ping', {});
    expect(pushesOf(f, txN.hash).map((m) => m.id)).to.deep.equal([push.id]);
    expect(hooksOf(apps.fetched.hook, txN.hash)).to.have.length(1);
    expect(await pushMessages(apps.fetched.id, txN.hash)).to.have.length(1);
  });

  it('unsubscribe stops an address on a connection following every address (checksummed, no chain_type) and never widens an emptied set', async () => {
    // The same block under another height and hashes: its push of the transfer to addrU is new.
    // (The connections may also be re-sent the first block's push on connecting: they opened
    // after it, and it is unacknowledged. Only the new hash counts below.)
    const again = rebaseBlock('evm', { block: items.block, receipts: items.receipts }, height + 1, randomSuffix());
    const hashU = again.hashes.get(items.block.transactions[block.transactions.indexOf(txU)].hash)!;
    const control = await open(apps.unsub.key);
    const muted = await open(apps.unsub.key);
    const emptied = await open(apps.unsub.key);
    const back = await open(apps.unsub.key);
    const reply = await request(muted, 'unsubscribe', { address: checksummed(addrU) });
    expect(reply).to.include({ type: 'unsubscribe', code: 0, msg: 'success' });
    expect(reply.data).to.deep.equal({ address: checksummed(addrU), chainType: null });
    expect((await request(emptied, 'subscribe', { address: addrU, chain_type: 'ethereum' })).code).to.equal(0);
    const emptiedReply = await request(emptied, 'unsubscribe', { address: addrU, chain_type: 'ethereum' });
    expect(emptiedReply.data).to.deep.equal({ address: addrU, chainType: 'ethereum' });
    await request(back, 'unsubscribe', { address: addrU, chain_type: 'ethereum' });
    await request(back, 'subscribe', { address: addrU, chain_type: 'ethereum' });

    await post([again.item], 'block_with_receipts', again.height);
    await seen(control, hashU, 'the push to the connection that changed nothing');
    await seen(back, hashU, 'the push to the connection that subscribed again');
    // One hub writes a push to every connection of the application at once: once the others
    // have it and the replies to a ping came back, nothing more is on its way to these two.
    for (const c of [muted, emptied]) await request(c, 'ping', {});
    expect(pushesOf(muted, hashU), 'unsubscribed without chain_type, checksummed').to.deep.equal([]);
    expect(pushesOf(emptied, hashU), 'the last subscription removed').to.deep.equal([]);
  });

  it('traces merged in later push nothing again to an application that had the transaction, and the transaction to one monitoring an address only the traces show', async () => {
    const enriched = rebaseBlock('evm', items.all, height + 2, randomSuffix());
    const hashE = enriched.hashes.get(fixtureHashE)!;
    const e = await open(apps.enriched.key);
    const i = await open(apps.internal.key);
    await post([{ block: enriched.item.block, receipts: enriched.item.receipts }], 'block_with_receipts', enriched.height);
    const first = await seen(e, hashE, 'the push of 0xb240b922… before the traces');
    ack(e, hashE);
    await waitFor(() => hooksOf(apps.enriched.hook, hashE)[0], { timeoutMs: 60_000, what: 'the webhook of 0xb240b922…' });
    expect(pushesOf(i)).to.deep.equal([]);

    await post(enriched.item.traces, 'debug_traces', enriched.height);
    const internal = await seen(i, hashE, 'the push to the application monitoring the internal receiver');
    expect(internal.data.listenAddress).to.deep.equal([addrI]);
    expect(JSON.stringify(internal.data.internalTransactionDetails)).to.include(addrI.slice(2));
    await drained();
    await request(e, 'ping', {});
    expect(pushesOf(e, hashE).map((m) => m.id)).to.deep.equal([first.id]);
    expect(hooksOf(apps.enriched.hook, hashE), 'one webhook for 0xb240b922…, none for its traces').to.have.length(1);
    // Decided once for both channels: tx-matcher made one push of it for each application.
    expect(await pushMessages(apps.enriched.id, hashE), 'pushes to the application that had it').to.have.length(1);
    expect(await pushMessages(apps.internal.id, hashE), 'pushes to the application of the internal receiver').to.have.length(1);
  });
});
