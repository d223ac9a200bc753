import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import express from 'express';
import { Registry } from 'prom-client';
import { createDb, type Knex } from '@chainpipe/db';
import { API_KEY_HEADER, parseOhlcvList, type PoolRecord } from '@chainpipe/kline';
import { LatestCandles, PoolRepository } from '@chainpipe/kline-store';
import { createRedis, type Redis } from '@chainpipe/redis';
import { createLogger, type Clock, type Timer } from '@chainpipe/runtime';
import { testEnv, waitFor } from '@chainpipe/testing';
import { upstreamJson, upstreamUrl } from '@chainpipe/upstreams';
import { MarketIngester } from '../../apps/market-ingester/src/ingester';
import { UpstreamSocket } from '../../apps/market-ingester/src/upstream-socket';
import { COINGECKO_REST_BASE, coingeckoRouter } from '../../apps/upstream-sim/src/market/coingecko-router';
import { OhlcvStreamServer } from '../../apps/upstream-sim/src/market/ohlcv-stream';
import type { PoolsSource } from '../../apps/upstream-sim/src/market/pools-source';
import { StickyFaults } from '../../apps/upstream-sim/src/market/router';
import { aggregatorOn, handleTicks } from './kline-support';

/** Time running FACTOR times as fast as the wall clock, from `startSec`: a minute of it passes in 60 / FACTOR s (the stand-in, the ingester and its sockets all on it). */
const FACTOR = 20;
function fastClock(startSec: number): Pick<Clock, 'now' | 'setTimeout' | 'setInterval'> {
  const real0 = Date.now();
  return {
    now: () => startSec * 1000 + (Date.now() - real0) * FACTOR,
    setTimeout: (fn: () => void, ms: number): Timer => {
      const t = setTimeout(fn, ms / FACTOR);
      const timer: Timer = { cancel: () => clearTimeout(t), unref: () => (t.unref(), timer) };
      return timer;
    },
    setInterval: (fn: () => void, ms: number): Timer => {
      const t = setInterval(fn, ms / FACTOR);
      const timer: Timer = { cancel: () => clearInterval(t), unref: () => (t.unref(), timer) };
      return timer;
    },
  };
}

/**
 * The live feed's gaps made whole: the development stand-in of CoinGecko (its OnchainOHLCV stream
 * and its REST OHLCV, on one clock running 20× the wall clock), market-ingester on a real socket,
 * and the aggregator's handler on real Postgres and Redis in place of the broker. The broker goes
 * away for a while (the updates wait), then the upstream socket is cut (the updates of that
 * moment are lost, and the backfill brings their minute back from the REST OHLCV). Every whole
 * minute stored equals the stand-in's REST answer: the candles it streamed.
 */
describe('market-ingester: broker away and upstream cut, the minutes equal the feed', () => {
  const env = testEnv();
  const logger = createLogger({ name: 'market-ingester-gaps-test', level: 'silent' });
  let db: Knex;
  let redis: Redis;
  let server: http.Server;
  let stream: OhlcvStreamServer;
  let base: string;
  let pool: PoolRecord;
  // A whole minute of the fast clock, some way ahead of any other suite's candles.
  const START = Math.floor(Date.now() / 1000 / 60) * 60 + 30 * 86_400;
  const clock = fastClock(START);

  before(async () => {
    db = createDb({ url: env.databaseUrl, poolMax: 4 });
    redis = createRedis({ url: env.redisUrl, keyPrefix: `${env.runId}:market-gaps:` });
    const address = `0x${randomBytes(20).toString('hex')}`;
    await db('kline.pools').insert({ chain_type: 'evm', chain_id: '1', network_id: 'eth', pool_address: address, token: 'base', is_active: true });
    [pool] = await new PoolRepository(db).active().then((all) => all.filter((p) => p.pool_address === address));
    stream = new OhlcvStreamServer({ logger, apiKey: 'k', tickMs: 50, maxSubscriptionsPerSocket: 100, pingMs: 30_000, now: clock.now });
    const app = express();
    app.use(coingeckoRouter({ pools: {} as PoolsSource, topHolders: {}, faults: new StickyFaults(), stream, apiKey: 'k' }));
    server = http.createServer(app);
    server.on('upgrade', (req, socket, head) => {
      if (!stream.upgrade(req, socket, head)) socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    await stream.close();
    await new Promise((resolve) => server.close(resolve));
    await db('kline.pools').where({ id: pool.id }).delete();
    await db.destroy();
    redis.disconnect();
  });

  /** The stand-in's minutes of the pool (its REST OHLCV), oldest first. */
  const feedMinutes = async () =>
    parseOhlcvList(
      await upstreamJson({
        url: upstreamUrl(base, `${COINGECKO_REST_BASE}/onchain/networks/eth/pools/${pool.pool_address}/ohlcv/minute`),
        query: { aggregate: '1', limit: '1000', token: 'base' },
        headers: { [API_KEY_HEADER]: 'k' },
        timeoutMs: 5_000,
      }),
    );

  it('stores every whole minute as the stand-in streamed it', async function () {
    this.timeout(60_000);
    const handler = aggregatorOn(db, new LatestCandles(redis));
    let brokerDown = false;
    const registry = new Registry();
    const ingester = new MarketIngester({
      activePools: async () => [pool],
      publish: async (messages) => {
        if (brokerDown) throw new Error('broker away');
        await handleTicks(handler, messages.map((m) => m.value));
      },
      openSocket: (index, onUpdate, onGap) => {
        const socket = new UpstreamSocket({ index, url: `${base.replace('http', 'ws')}/v1`, apiKey: 'k', pingMs: 30_000, reconnect: { initialMs: 50, maxMs: 200 }, onUpdate, onGap, logger, clock });
        socket.start();
        return socket;
      },
      interval: '1s',
      subscriptionsPerSocket: 100,
      logger,
      registry,
      clock,
      maxPendingTicks: 100_000,
      publishRetry: { initialMs: 2_000, maxMs: 4_000 },
      backfill: {
        fetchMinutes: async (p, beforeSec, limit) =>
          parseOhlcvList(
            await upstreamJson({
              url: upstreamUrl(base, `${COINGECKO_REST_BASE}/onchain/networks/${p.network_id}/pools/${p.pool_address}/ohlcv/minute`),
              query: { aggregate: '1', before_timestamp: String(beforeSec), limit: String(limit), token: p.token },
              headers: { [API_KEY_HEADER]: 'k' },
              timeoutMs: 5_000,
            }),
          ),
        latestStoredMinutes: async () => new Map(),
        settleMs: 2_000,
      },
    });
    const minute = () => Math.floor(clock.now() / 60_000) * 60;
    const metric = async (name: string) => (await registry.getSingleMetric(name)!.get()).values.reduce((n, v) => n + v.value, 0);
    try {
      await ingester.sync();
      await waitFor(async () => (await db('kline.candles').where({ pool_id: pool.id, interval: '1s' }).count<{ count: string }[]>())[0].count !== '0', { what: 'the first candles' });
      const first = minute();
      await waitFor(() => minute() > first, { what: 'the next minute' });
      // The broker away for 40 s of the feed: the updates wait, then go out in order.
      brokerDown = true;
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      brokerDown = false;
      await waitFor(() => ingester.status() && (ingester as unknown as { pending: { size: number } }).pending.size === 0, { what: 'the backlog published' });
      // The upstream socket cut and the stream unreachable: what it moves meanwhile is lost, until the backfill.
      const cutMinute = minute();
      // Away for 1.5 s of the wall clock: 30 s of the feed it does not hear.
      stream.dropAll(1_500);
      await waitFor(async () => (await metric('chainpipe_market_backfilled_candles_total')) > 0, { what: 'the cut minute backfilled', timeoutMs: 20_000 });
      expect(await metric('chainpipe_market_backfill_gaps_total'), 'one gap: the cut').to.equal(1);
      // The status marks the gap: its window covers the cut minute, and its 1s candles are missing.
      const [gap] = ingester.status().gaps ?? [];
      expect(gap && { reason: gap.reason, pools: gap.pools, missing: gap.missingIntervals }).to.deep.equal({ reason: 'reconnect', pools: 1, missing: ['1s'] });
      expect(Date.parse(gap.from) / 1000, 'the window starts at or before the cut minute').to.be.at.most(cutMinute);
      expect(Date.parse(gap.to) / 1000, 'the window ends at or after the cut minute').to.be.at.least(cutMinute);
      // Two more whole minutes of the live feed after it.
      await waitFor(() => minute() >= cutMinute + 180, { what: 'minutes after the cut' });
      const last = minute() - 60;
      await waitFor(() => minute() > last + 60, { what: 'the last compared minute closed' });
      await new Promise((resolve) => setTimeout(resolve, 300));

      const feed = (await feedMinutes()).filter((m) => m.t <= last);
      const stored = (await db('kline.candles').where({ pool_id: pool.id, interval: '1m' }).where('open_time', '<=', last).orderBy('open_time')) as { open_time: string; open: number; high: number; low: number; close: number; volume: number }[];
      expect(feed.length, 'minutes compared').to.be.at.least(4);
      expect(feed.some((m) => m.t === cutMinute), 'the cut minute is among them').to.equal(true);
      expect(stored.map((r) => Number(r.open_time))).to.deep.equal(feed.map((m) => m.t));
      stored.forEach((r, i) => {
        const f = feed[i];
        expect({ open: r.open, high: r.high, low: r.low, close: r.close }, `minute ${f.t}`).to.deep.equal({ open: f.o, high: f.h, low: f.l, close: f.c });
        expect(r.volume, `volume of minute ${f.t}`).to.be.closeTo(f.v!, Math.abs(f.v!) * 1e-9);
      });
    } finally {
      await ingester.stop();
    }
  });
});
