import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { TOPICS } from '@chainpipe/contracts';
import { createDb, type Knex } from '@chainpipe/db';
import { ConnectionCap, createRedis, type Redis } from '@chainpipe/redis';
import {
  ManualClock,
  connectWs,
  createAppWithKey,
  createRegistryTopics,
  refusedUpgrade,
  startTxGateway,
  stopProcess,
  testEnv,
  uniquePrefix,
  waitFor,
  type RunningProcess,
  type TestWsClient,
} from '@chainpipe/testing';

/**
 * The per-key WebSocket connection cap counts the connections of every tx-gateway copy (Redis),
 * and the slots of a copy that died come back once their leases run out.
 */
describe('WebSocket connection cap per API key across gateway copies', function () {
  this.timeout(120_000);
  const env = testEnv();

  describe('ConnectionCap on Redis (two copies, a manual clock)', () => {
    let redis: Redis;
    const clock = new ManualClock(1_700_000_000_000);
    const key = `k-${randomBytes(3).toString('hex')}`;
    let copyA: ConnectionCap;
    let copyB: ConnectionCap;

    before(() => {
      redis = createRedis({ url: env.redisUrl, keyPrefix: `${uniquePrefix('cap')}:` });
      copyA = new ConnectionCap(redis, { maxPerKey: 2, leaseMs: 30_000 }, clock);
      copyB = new ConnectionCap(redis, { maxPerKey: 2, leaseMs: 30_000 }, clock);
    });
    after(() => redis.disconnect());

    it('refuses a third connection on either copy, lets one in after a release, and frees the slots of a copy that stopped renewing', async () => {
      expect(await copyA.acquire(key, 'a1')).to.equal(true);
      expect(await copyB.acquire(key, 'b1')).to.equal(true);
      expect(await copyA.acquire(key, 'a2')).to.equal(false);
      expect(await copyB.acquire(key, 'b2')).to.equal(false);
      await copyA.release(key, 'a1');
      expect(await copyB.acquire(key, 'b2')).to.equal(true);
      // Copy A holds nothing now; copy B dies holding b1 and b2. Within the lease they still count.
      await clock.advance(29_999);
      expect(await copyA.acquire(key, 'a3')).to.equal(false);
      await clock.advance(1);
      expect(await copyA.acquire(key, 'a3')).to.equal(true);
      // A renewed connection keeps its slot past its first lease.
      await clock.advance(20_000);
      await copyA.renew([{ keyId: key, connectionId: 'a3' }]);
      await clock.advance(20_000);
      expect(await copyA.acquire(key, 'a4')).to.equal(true);
      expect(await copyA.acquire(key, 'a5')).to.equal(false);
    });
  });

  describe('two tx-gateway processes', () => {
    let db: Knex;
    const prefix = uniquePrefix('wscap');
    const gateways: RunningProcess[] = [];
    const urls: string[] = [];
    const clients: TestWsClient[] = [];
    let apiKey = '';

    before(async () => {
      db = createDb({ url: env.databaseUrl, poolMax: 2 });
      apiKey = (await createAppWithKey(db)).key;
      await createRegistryTopics(prefix, [TOPICS.txPush, TOPICS.addressesChanges]);
      for (let i = 0; i < 2; i++) {
        const gw = await startTxGateway(prefix, { WS_MAX_CONNECTIONS_PER_KEY: '2' });
        gateways.push(gw.proc);
        urls.push(gw.wsUrl);
      }
    });

    after(async () => {
      await Promise.all(clients.map((c) => c.close()));
      for (const g of gateways) expect(await stopProcess(g), 'clean shutdown').to.equal(0);
      await db?.destroy();
    });

    const open = async (url: string) => {
      const c = await connectWs(url, { 'x-api-key': apiKey, 'x-resendduration': '0' });
      clients.push(c);
      await c.next((m) => m.type === 'connected');
      return c;
    };

    it('one connection on each copy fills a cap of 2: a third is refused (429) on both; a close frees a slot for the other copy', async () => {
      const first = await open(urls[0]);
      await open(urls[1]);
      expect(await refusedUpgrade(urls[0], { 'x-api-key': apiKey })).to.include({ status: 429 });
      expect(await refusedUpgrade(urls[1], { 'x-api-key': apiKey })).to.include({ status: 429 });
      await first.close();
      // The slot comes back once the first copy saw the close.
      await waitFor(() => open(urls[1]).then(() => true, () => false), { timeoutMs: 10_000, what: 'a connection accepted on the second copy' });
      expect(await refusedUpgrade(urls[0], { 'x-api-key': apiKey })).to.include({ status: 429 });
    });
  });
});
