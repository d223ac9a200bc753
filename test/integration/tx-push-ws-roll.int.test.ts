import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { networkByName } from '@chainpipe/chains';
import { TOPICS, type TxPushMessage } from '@chainpipe/contracts';
import { createDb, type Knex } from '@chainpipe/db';
import {
  connectWs,
  createAppWithKey,
  createRegistryTopics,
  evmBlockItem,
  produceJson,
  startTxGateway,
  stopProcess,
  testEnv,
  testKafka,
  topicMessage,
  uniquePrefix,
  waitFor,
  type RunningProcess,
  type TestWsClient,
} from '@chainpipe/testing';
import { parseEvmPayload } from '@chainpipe/tx-parsers';

type Json = any;

/**
 * WebSocket delivery across a gateway restart and a roll (real tx-gateway processes, Redis, the
 * test writing tx.push.v1 as tx-matcher does, a push every 100 ms the whole time): what was
 * matched while no copy consumed reaches the client when it reconnects, whichever copy it
 * reaches, and no consumer group is left behind per copy.
 */
describe('WebSocket push across gateway restarts and rolls (tx-gateway processes)', function () {
  this.timeout(180_000);
  const env = testEnv();
  const network = networkByName('ethereum-mainnet')!;
  const ctx = { chainType: network.chainType, chainId: network.chainId, family: network.family, nativeSymbol: network.nativeSymbol, nativeDecimals: network.nativeDecimals };
  const txs = parseEvmPayload([evmBlockItem()], ctx).blocks[0].transactions;
  const prefix = uniquePrefix('wsroll');
  const pushTopic = prefix + TOPICS.txPush.name;
  /** The push group of every copy (startTxGateway's). */
  const group = `${prefix}push`;
  const app = { id: `wsroll-${randomBytes(4).toString('hex')}`, key: '' };
  let db: Knex;
  /** Running gateways and their WebSocket URLs. */
  const gateways = new Map<RunningProcess, string>();
  const clients: TestWsClient[] = [];

  const push = (i: number): TxPushMessage => {
    const tx = { ...txs[i % txs.length], tx_hash: `0x${randomBytes(32).toString('hex')}` };
    return topicMessage(TOPICS.txPush, { message_id: randomBytes(16).toString('hex'), app_id: app.id, tx_id: String(2_000_000 + i), network: 'ethereum-mainnet', listen_address: [tx.sender!], is_reorg_resend: false, orphaned: false, ws: true, webhook: false, matched_at: Date.now(), tx });
  };

  /** Pushes every 100 ms until stopped, as blocks keep arriving during a deploy; their ids. */
  function matching() {
    const ids: string[] = [];
    let running = true;
    const loop = (async () => {
      for (let i = 0; running; i++) {
        const p = push(i);
        await produceJson(pushTopic, [{ key: p.app_id, value: p }]);
        ids.push(p.message_id);
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    return {
      ids,
      stop: async () => {
        running = false;
        await loop;
        return ids;
      },
    };
  }

  async function startGateway(): Promise<{ proc: RunningProcess; url: string }> {
    const { proc, wsUrl } = await startTxGateway(prefix, { TX_GATEWAY_SESSION_TIMEOUT_MS: '6000' });
    gateways.set(proc, wsUrl);
    return { proc, url: wsUrl };
  }

  async function stopGateway(proc: RunningProcess): Promise<void> {
    gateways.delete(proc);
    expect(await stopProcess(proc), 'clean shutdown').to.equal(0);
  }

  /** A client as a user runs it: a 10-minute resend window, reconnecting after a close. */
  async function open(url: string): Promise<TestWsClient> {
    const c = await connectWs(url, { 'x-api-key': app.key, 'x-resendduration': '600' });
    clients.push(c);
    await c.next((m) => m.type === 'connected');
    return c;
  }

  const delivered = () => new Set(clients.flatMap((c) => c.received.filter((m: Json) => m.type === 'transaction').map((m: Json) => m.id as string)));

  async function groupsOnBroker(): Promise<string[]> {
    const admin = testKafka().admin();
    await admin.connect();
    try {
      return (await admin.listGroups()).groups.map((g) => g.groupId).filter((g) => g.startsWith(prefix));
    } finally {
      await admin.disconnect();
    }
  }

  before(async () => {
    db = createDb({ url: env.databaseUrl, poolMax: 2 });
    app.key = (await createAppWithKey(db, { id: app.id })).key;
    await createRegistryTopics(prefix, [TOPICS.txPush, TOPICS.addressesChanges]);
  });

  after(async () => {
    await Promise.all(clients.map((c) => c.close()));
    for (const g of [...gateways.keys()]) await stopGateway(g);
    await db?.destroy();
  });

  it('a restart: pushes matched while no gateway ran reach the client when it reconnects', async () => {
    const first = await startGateway();
    const before = await open(first.url);
    const load = matching();
    await waitFor(() => delivered().size >= 5, { timeoutMs: 20_000, what: 'live pushes before the restart' });
    const closed = new Promise<number>((r) => before.ws.once('close', (code) => r(code)));
    await stopGateway(first.proc);
    expect(await closed, 'going away').to.equal(1001);
    // Nothing consumes tx.push.v1 for a while.
    const downFrom = load.ids.length;
    await waitFor(() => load.ids.length >= downFrom + 10, { timeoutMs: 20_000, what: 'pushes matched while no gateway runs' });
    const second = await startGateway();
    await open(second.url);
    await waitFor(() => load.ids.length >= downFrom + 25, { timeoutMs: 20_000, what: 'pushes after the restart' });
    const ids = await load.stop();
    await waitFor(() => ids.every((id) => delivered().has(id)), { timeoutMs: 30_000, what: `every push delivered (${ids.filter((id) => !delivered().has(id)).length} missing)` });
    expect(await groupsOnBroker()).to.deep.equal([group]);
  });

  it('a roll (a new copy starts, the old one stops): every push reaches the client, on either copy', async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
    const [[oldGateway, oldUrl]] = [...gateways];
    const next = await startGateway();
    // The client stays on the old copy while both run: the new one may own the partitions by now.
    const client = await open(oldUrl);
    const load = matching();
    await waitFor(() => delivered().size >= 10, { timeoutMs: 20_000, what: 'live pushes while both copies run' });
    const closed = new Promise<number>((r) => client.ws.once('close', (code) => r(code)));
    await stopGateway(oldGateway);
    expect(await closed, 'going away').to.equal(1001);
    const movedAt = load.ids.length;
    await open(next.url);
    await waitFor(() => load.ids.length >= movedAt + 20, { timeoutMs: 20_000, what: 'pushes after the roll' });
    const ids = await load.stop();
    await waitFor(() => ids.every((id) => delivered().has(id)), { timeoutMs: 30_000, what: `every push delivered (${ids.filter((id) => !delivered().has(id)).length} missing)` });
    expect(await groupsOnBroker()).to.deep.equal([group]);
  });
});
