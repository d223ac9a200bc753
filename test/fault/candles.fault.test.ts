import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { createDb, type Knex } from '@chainpipe/db';
import { API_KEY_HEADER, parseOhlcvList } from '@chainpipe/kline';
import { AppProcess, freePort, testEnv, waitFor } from '@chainpipe/testing';
import { faultEnv, recoveries } from './fault-env';

/**
 * The candle path under faults, every part a real process: the CoinGecko stand-in (its
 * OnchainOHLCV stream and REST OHLCV), market-ingester and kline-aggregator on the suite's own
 * broker and Postgres. The broker is stopped and started again, then the upstream stream is cut
 * and refused for a while; once their minute has closed, every whole minute stored equals
 * the stand-in's REST answer (the candles its stream moved): the updates waited for the broker,
 * and the cut's minute came back from the REST OHLCV.
 */
describe('faults of the candle path: broker stopped, upstream cut (real processes, own broker and Postgres)', function () {
  this.timeout(240_000);
  let db: Knex;
  let sim: AppProcess;
  let ingester: AppProcess;
  let aggregator: AppProcess;
  let simBase: string;
  let poolId: number;
  const address = `0x${randomBytes(20).toString('hex')}`;

  before(async function () {
    this.timeout(120_000);
    const env = faultEnv();
    db = createDb({ url: env.databaseUrl, poolMax: 2 });
    [{ id: poolId }] = (await db('kline.pools').insert({ chain_type: 'evm', chain_id: '1', network_id: 'eth', pool_address: address, token: 'base', is_active: true }).returning('id')) as { id: number }[];
    const simPort = await freePort();
    simBase = `http://127.0.0.1:${simPort}`;
    sim = await AppProcess.start('apps/upstream-sim/src/main.ts', { PORT: String(simPort), SIM_OHLCV_TICK_MS: '200', SIM_OHLCV_PING_MS: '1000', LOG_LEVEL: 'warn' });
    const common = {
      KAFKA_BROKERS: env.broker.brokers.join(','),
      DATABASE_URL: env.databaseUrl,
      REDIS_URL: testEnv().redisUrl,
      REDIS_KEY_PREFIX: `${testEnv().runId}:candles-fault:`,
      KAFKA_PUBLISH_TIMEOUT_MS: '3000',
      LOG_LEVEL: 'warn',
    };
    [ingester, aggregator] = await Promise.all([
      AppProcess.start('apps/market-ingester/src/main.ts', {
        ...common,
        MARKET_WS_URL: `${simBase.replace('http', 'ws')}/v1`,
        KLINE_MARKET_API_URL: `${simBase}/coingecko/api/v3`,
        MARKET_API_KEY: 'fault-suite',
        MARKET_RECONNECT_INITIAL_MS: '100',
        MARKET_RECONNECT_MAX_MS: '1000',
        MARKET_PING_MS: '1000',
        MARKET_BACKFILL_SETTLE_MS: '1000',
        MARKET_INGESTER_GROUP: 'fault-market-ingester',
      }),
      AppProcess.start('apps/kline-aggregator/src/main.ts', { ...common, KLINE_AGGREGATOR_GROUP: 'fault-kline-aggregator' }),
    ]);
  });

  afterEach(function () {
    if (this.currentTest?.state !== 'failed') return;
    for (const [name, app] of [['upstream-sim', sim], ['market-ingester', ingester], ['kline-aggregator', aggregator]] as const) {
      const file = path.join(os.tmpdir(), `fault-${name}.log`);
      writeFileSync(file, app?.process.output() ?? '');
      console.log(`    ${name} output: ${file}`);
    }
  });

  after(async () => {
    const codes = [];
    for (const app of [ingester, aggregator, sim]) if (app) codes.push(await app.stop());
    await db?.destroy();
    expect(codes, 'every app shuts down cleanly after the faults').to.deep.equal([0, 0, 0]);
  });

  const minuteNow = () => Math.floor(Date.now() / 60_000) * 60;

  /** What the stored whole minutes differ in from the stand-in's (undefined: none), up to the minute before `before`. */
  async function mismatch(before: number): Promise<string | undefined> {
    const answer = await fetch(`${simBase}/coingecko/api/v3/onchain/networks/eth/pools/${address}/ohlcv/minute?aggregate=1&limit=1000&token=base`, { headers: { [API_KEY_HEADER]: 'fault-suite' } });
    const feed = parseOhlcvList(await answer.json()).filter((m) => m.t < before);
    const stored = (await db('kline.candles').where({ pool_id: poolId, interval: '1m' }).where('open_time', '<', before).orderBy('open_time')) as { open_time: string; open: number; high: number; low: number; close: number; volume: number }[];
    if (stored.map((r) => Number(r.open_time)).join() !== feed.map((m) => m.t).join()) return `minutes ${stored.map((r) => r.open_time)} against the feed's ${feed.map((m) => m.t)}`;
    for (const [i, r] of stored.entries()) {
      const f = feed[i];
      if (r.open !== f.o || r.high !== f.h || r.low !== f.l || r.close !== f.c || Math.abs(r.volume - f.v!) > Math.abs(f.v!) * 1e-9) return `minute ${f.t}: stored ${JSON.stringify(r)}, feed ${JSON.stringify(f)}`;
    }
    return undefined;
  }

  it('every whole minute equals the feed after the broker is stopped and the upstream cut', async () => {
    const { broker } = faultEnv();
    await waitFor(async () => (await db('kline.candles').where({ pool_id: poolId, interval: '1s' }).first()) !== undefined, { what: 'the first candles', timeoutMs: 60_000 });
    // The broker away 8 s, then the stream cut and refused 4 s; every minute up to the one the
    // faults end in is compared once it has closed.
    const firstFault = minuteNow();
    await broker.stop();
    await new Promise((resolve) => setTimeout(resolve, 8_000));
    const started = Date.now();
    await broker.start();
    const cut = (await (await fetch(`${simBase}/sim/coingecko/ws/drop?outage_ms=4000`, { method: 'POST' })).json()) as { dropped: number };
    expect(cut.dropped, 'the ingester socket cut').to.be.at.least(1);
    await new Promise((resolve) => setTimeout(resolve, 4_000));
    const faulted = minuteNow();
    await waitFor(() => minuteNow() > faulted, { what: 'the minute of the faults closed', timeoutMs: 70_000 });
    let last: string | undefined;
    await waitFor(async () => (last = await mismatch(faulted + 60)) === undefined, { what: () => `the minutes equal to the feed (${last})`, timeoutMs: 60_000, intervalMs: 500 });
    recoveries.push({ fault: 'broker down, upstream cut', what: 'broker start to candles equal to the feed', ms: Date.now() - started });
    const minutes = (await db('kline.candles').where({ pool_id: poolId, interval: '1m' }).whereBetween('open_time', [firstFault, faulted]).count<{ count: string }[]>())[0];
    expect(Number(minutes.count), 'the minutes of the faults among those compared').to.equal((faulted - firstFault) / 60 + 1);
  });
});
