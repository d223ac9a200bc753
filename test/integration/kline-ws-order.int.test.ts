import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { Registry } from 'prom-client';
import { WebSocketServer } from 'ws';
import type { KlineCandle, KlineCandlesMessage, MarketTickMessage } from '@chainpipe/contracts';
import { createDb, type Knex } from '@chainpipe/db';
import { poolKey } from '@chainpipe/kline';
import { LatestCandles, PoolRepository } from '@chainpipe/kline-store';
import { createRedis, type Redis } from '@chainpipe/redis';
import { createLogger, systemClock } from '@chainpipe/runtime';
import { connectWs, testEnv, type TestWsClient } from '@chainpipe/testing';
import { RECORDS_PER_GROUP } from '../../apps/kline-aggregator/src/ticks.handler';
import { KlineHub, type KlineHubDeps } from '../../apps/market-gateway/src/kline/ws-hub';
import { aggregatorOn, handleTicks } from './kline-support';

/**
 * The candlestick hub answers a connection's commands in the order they arrive, and the snapshot
 * after `subscribed` is never older than a live push already sent on that connection. Real
 * Postgres (the active-pool look-up), real Redis (the latest candles) and real WebSockets; the
 * interleavings are made certain by holding a look-up until the test lets it go.
 */
describe('candlestick WebSocket: command order and snapshot age', () => {
  const env = testEnv();
  const logger = createLogger({ name: 'kline-ws-order-test', level: 'silent' });
  let db: Knex;
  let redis: Redis;
  let wss: WebSocketServer;
  let hub: KlineHub;
  let url: string;
  const clients: TestWsClient[] = [];
  /** Set by a test to hold the hub's look-ups; the default lets them through at once. */
  let poolLookupGate: () => Promise<void> = async () => {};
  let latestReadGate: () => Promise<void> = async () => {};
  let pool: { chain_type: string; chain_id: number; pool_address: string; token: 'base' };
  let key: string;

  before(async () => {
    db = createDb({ url: env.databaseUrl, poolMax: 2 });
    redis = createRedis({ url: env.redisUrl, keyPrefix: `${env.runId}:kline-ws-order:` });
    pool = { chain_type: 'evm', chain_id: 1, pool_address: `0x${randomBytes(20).toString('hex')}`, token: 'base' };
    await db('kline.pools').insert({ ...pool, chain_id: String(pool.chain_id), network_id: 'eth', is_active: true });
    key = poolKey(pool);
    const pools = new PoolRepository(db);
    const latest = new LatestCandles(redis);
    const deps: KlineHubDeps = {
      activePools: async (chainType, chainId, address) => {
        const found = await pools.activeByAddress(chainType, chainId, address);
        await poolLookupGate();
        return found;
      },
      latest: {
        get: async (k, intervals) => {
          const found = await latest.get(k, intervals);
          await latestReadGate();
          return found;
        },
      },
      logger,
      registry: new Registry(),
      clock: systemClock,
      maxBufferedBytes: 1024 * 1024,
      pingMs: 30_000,
    };
    hub = new KlineHub(deps);
    wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    wss.on('connection', (ws) => hub.add(ws));
    await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
    url = `ws://127.0.0.1:${(wss.address() as AddressInfo).port}`;
  });
  afterEach(async () => {
    poolLookupGate = async () => {};
    latestReadGate = async () => {};
    await Promise.all(clients.splice(0).map((c) => c.close()));
  });
  after(async () => {
    await hub.closeAll();
    await new Promise<void>((resolve) => wss.close(() => resolve()));
    await db('kline.pools').whereRaw('lower(pool_address) = ?', [pool.pool_address]).delete();
    await db.destroy();
    redis.disconnect();
  });

  const open = async () => {
    const c = await connectWs(url);
    clients.push(c);
    return c;
  };
  const data = { chain_type: 'evm', chain_id: 1 } as const;
  const candle = (interval: KlineCandle['interval'], openTime: number, close: number, updatedAt: number): KlineCandle => ({
    pool_id: 1, ...pool, interval, open_time: openTime, open: 1, high: Math.max(1, close), low: 1, close, volume: 10, updated_at: updatedAt,
  });
  /** The kline.candles.v2 record of one candle. */
  const record = ({ interval, open_time, open, high, low, close, volume, ...head }: KlineCandle): KlineCandlesMessage => ({ ...head, candles: [{ interval, open_time, open, high, low, close, volume }] });
  /** The first look-up is the slowest: run side by side, the later command would finish first. */
  const slowLookups = () => {
    let n = 0;
    poolLookupGate = () => new Promise((resolve) => setTimeout(resolve, n++ === 0 ? 200 : 20));
  };

  it('an unsubscribe sent right after a subscribe is answered after it and removes the subscription', async () => {
    slowLookups();
    const c = await open();
    c.send({ id: 's1', type: 'subscribe', data: { ...data, pool_address: pool.pool_address, intervals: ['1m'] } });
    c.send({ id: 'u1', type: 'unsubscribe', data: { ...data, pool_address: pool.pool_address } });
    const unsubscribed = await c.next((m) => m.id === 'u1');
    expect(unsubscribed).to.include({ type: 'unsubscribed', code: 0 });
    expect(unsubscribed.data.removed_keys).to.deep.equal([key]);
    expect(c.received.map((m) => `${m.id}:${m.type}`), 'replies in command order').to.deep.equal(['s1:subscribed', 'u1:unsubscribed']);
    hub.deliver(record(candle('1m', 1_800_000_000, 2, Date.now())));
    expect(await c.collect((m) => m.type === 'ohlcv', 300), 'no push after the unsubscribe').to.deep.equal([]);
  });

  it('two quick re-subscribes leave the intervals of the later one', async () => {
    slowLookups();
    const c = await open();
    c.send({ id: 's2', type: 'subscribe', data: { ...data, pool_address: pool.pool_address, intervals: ['1m', '1h'] } });
    c.send({ id: 's3', type: 'subscribe', data: { ...data, pool_address: pool.pool_address, intervals: ['1s'] } });
    await c.next((m) => m.id === 's3' && m.type === 'subscribed');
    expect(c.received.filter((m) => m.type === 'subscribed').map((m) => [m.id, m.data.intervals])).to.deep.equal([
      ['s2', ['1m', '1h']],
      ['s3', ['1s']],
    ]);
    hub.deliver(record(candle('1m', 1_800_000_060, 3, Date.now())));
    hub.deliver(record(candle('1s', 1_800_000_061, 4, Date.now())));
    const push = await c.next((m) => m.type === 'ohlcv' && m.msg !== 'snapshot');
    expect(push.data).to.include({ interval: '1s', close: 4 });
    expect(await c.collect((m) => m.type === 'ohlcv' && m.data.interval === '1m', 300), 'the earlier intervals are gone').to.deep.equal([]);
  });

  it('a snapshot read before a live push is not sent older than that push', async () => {
    const openTime = 1_800_000_120;
    await new LatestCandles(redis).put(key, [candle('1m', openTime, 5, 1_000)]);
    let readDone!: () => void;
    const read = new Promise<void>((resolve) => (readDone = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    latestReadGate = () => {
      readDone();
      return released;
    };
    const c = await open();
    c.send({ id: 's4', type: 'subscribe', data: { ...data, pool_address: pool.pool_address, intervals: ['1m'] } });
    await read; // Redis answered with the candle at close 5
    hub.deliver(record(candle('1m', openTime, 6, 2_000))); // the same candle, later: close 6
    expect((await c.next((m) => m.type === 'ohlcv' && m.msg !== 'snapshot')).data).to.include({ open_time: openTime, close: 6 });
    release();
    const snapshot = await c.next((m) => m.type === 'ohlcv' && m.msg === 'snapshot');
    expect(snapshot.data).to.include({ open_time: openTime, close: 6 });
  });

  it("a connection's candle only moves forward: a lagging record older than the snapshot or a push is not sent", async () => {
    // A pool of its own: its snapshot in Redis stays out of the other tests' way.
    const own = { ...pool, pool_address: `0x${randomBytes(20).toString('hex')}` };
    await db('kline.pools').insert({ ...own, chain_id: String(own.chain_id), network_id: 'eth', is_active: true });
    const ownCandle = (openTime: number, close: number, updatedAt: number): KlineCandle => ({
      pool_id: 2, ...own, interval: '1m', open_time: openTime, open: 1, high: Math.max(1, close), low: 1, close, volume: 10, updated_at: updatedAt,
    });
    const openTime = 1_800_000_240;
    try {
      // Redis already holds the version stored at 3,000 (close 9): the snapshot on subscribe.
      await new LatestCandles(redis).put(poolKey(own), [ownCandle(openTime, 9, 3_000)]);
      const c = await open();
      c.send({ id: 's5', type: 'subscribe', data: { ...data, pool_address: own.pool_address, intervals: ['1m'] } });
      expect((await c.next((m) => m.type === 'ohlcv' && m.msg === 'snapshot')).data).to.include({ open_time: openTime, close: 9 });
      // A gateway consumer behind: the versions stored at 1,000 and 2,000 come after it.
      hub.deliver(record(ownCandle(openTime, 7, 1_000)));
      hub.deliver(record(ownCandle(openTime, 8, 2_000)));
      // Then the next version of that minute, the next minute, and a late version of the first.
      hub.deliver(record(ownCandle(openTime, 10, 4_000)));
      hub.deliver(record(ownCandle(openTime + 60, 11, 5_000)));
      hub.deliver(record(ownCandle(openTime, 12, 6_000)));
      const live = await c.collect((m) => m.type === 'ohlcv' && m.msg !== 'snapshot', 300);
      expect(live.map((m) => [m.data.open_time, m.data.close])).to.deep.equal([
        [openTime, 10],
        [openTime + 60, 11],
      ]);
    } finally {
      await db('kline.pools').whereRaw('lower(pool_address) = ?', [own.pool_address]).delete();
    }
  });

  it('the aggregator publishes a candle only once Redis holds it, so a snapshot read after a push finds it', async () => {
    const [{ id: poolId }] = (await db('kline.pools').whereRaw('lower(pool_address) = ?', [pool.pool_address]).select('id')) as { id: number }[];
    const latest = new LatestCandles(redis);
    const heldAtPublish: { interval: string; close: unknown; inRedis: unknown }[] = [];
    const handler = aggregatorOn(db, latest, async (messages) => {
      for (const { value } of messages) {
        for (const c of value.candles) {
          const stored = (await latest.get(poolKey(value), [c.interval])).get(c.interval);
          heldAtPublish.push({ interval: c.interval, close: c.close, inRedis: stored?.open_time === c.open_time ? stored.close : undefined });
        }
      }
    });
    const tick = (close: number, seq: number): MarketTickMessage => ({
      pool_id: poolId, ...pool, network_id: 'eth', interval: '1m', open_time: 1_800_000_180, open: 1, high: close, low: 1, close, volume: 1, received_at: Date.now(), seq,
    });
    await handleTicks(handler, [tick(7, 1)]);
    await handleTicks(handler, [tick(8, 2)]);
    const oneMinute = heldAtPublish.filter((h) => h.interval === '1m');
    expect(oneMinute.map((h) => h.close)).to.deep.equal([7, 8]);
    for (const h of oneMinute) expect(h.inRedis, 'Redis holds the published candle').to.equal(h.close);
  });

  it('a call of many pools publishes in groups, each once Redis holds its candles, every pool once', async () => {
    // Enough pools for three groups: each published as soon as its own snapshots are written.
    const count = RECORDS_PER_GROUP * 2 + 50;
    const tag = randomBytes(6).toString('hex');
    const ids = (
      (await db('kline.pools')
        .insert(Array.from({ length: count }, (_, i) => ({ chain_type: 'evm', chain_id: '1', network_id: 'eth', pool_address: `0x${tag}${String(i).padStart(28, '0')}`, token: 'base', is_active: true })))
        .returning(['id', 'pool_address'])) as { id: number; pool_address: string }[]
    ).sort((a, b) => a.id - b.id);
    try {
      const latest = new LatestCandles(redis);
      const publishes: { records: number; notYetInRedis: number }[] = [];
      const published = new Map<number, number>();
      const handler = aggregatorOn(db, latest, async (messages) => {
        let notYetInRedis = 0;
        for (const { value } of messages) {
          published.set(value.pool_id, (published.get(value.pool_id) ?? 0) + 1);
          const stored = (await latest.get(poolKey(value), ['1s'])).get('1s');
          if (stored?.close !== value.candles.find((c) => c.interval === '1s')?.close) notYetInRedis++;
        }
        publishes.push({ records: messages.length, notYetInRedis });
      });
      const ticks = ids.map(({ id, pool_address }, i): MarketTickMessage => ({
        pool_id: id, chain_type: 'evm', chain_id: 1, pool_address, token: 'base', network_id: 'eth', interval: '1s', open_time: 1_800_000_300, open: 1, high: 2, low: 1, close: 1 + i / 1000, volume: 1, received_at: Date.now(), seq: i,
      }));
      await handleTicks(handler, ticks);
      expect(publishes.length, 'three groups').to.equal(3);
      for (const p of publishes) expect(p.records).to.be.at.most(RECORDS_PER_GROUP);
      expect(publishes.reduce((n, p) => n + p.notYetInRedis, 0), 'records published before Redis held them').to.equal(0);
      expect([...published.values()].every((n) => n === 1) && published.size === count, 'every pool published once').to.equal(true);
    } finally {
      await db('kline.candles').whereIn('pool_id', ids.map((p) => p.id)).delete();
      await db('kline.pools').whereIn('id', ids.map((p) => p.id)).delete();
    }
  });
});
