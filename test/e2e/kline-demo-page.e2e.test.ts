import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { createDb, type Knex } from '@chainpipe/db';
import { AppProcess, REPO_ROOT, createRegistryTopics, freePort, launchChromium, stopProcess, testEnv, uniquePrefix, waitFor, type TestBrowser } from '@chainpipe/testing';
import { client, createTestKey, startCandlestickPipeline, type Started } from '../integration/price/support';

/**
 * The live chart page (GET /kline/demo) in a real headless Chromium against the real stack:
 * upstream-sim → market-ingester → Kafka → kline-aggregator → Postgres/Redis → market-gateway.
 * The page loads history, follows the WebSocket, and after the gateway restarts (the server drops
 * the socket) re-subscribes and fills the gap from history. A screenshot is left in
 * .run/screenshots/kline-demo.png for a person to look at.
 */
const SCREENSHOT = path.join(REPO_ROOT, '.run/screenshots/kline-demo.png');

describe('live chart page in a browser (sim → ingester → aggregator → gateway → Chromium)', function () {
  this.timeout(60_000);
  const env = testEnv();
  const prefix = uniquePrefix('kline-demo');
  let db: Knex;
  let key: string;
  let sim: Started, ingester: Started, aggregator: Started;
  let gw: AppProcess;
  let base: string;
  let browser: TestBrowser | undefined;
  let page: Page;
  let pool: any;
  const api = client(() => base, () => key);
  /** Browser errors (page exceptions, console errors such as a CSP refusal) while none are expected. */
  const browserErrors: string[] = [];
  let expectErrors = false;

  const chart = async () =>
    page.$eval('#chart', (el: any) => {
      const d = el.dataset;
      return { ws: d.ws, bars: Number(d.bars), lastTime: Number(d.lastTime), lastClose: d.lastClose, subscriptions: Number(d.subscriptions), pushes: Number(d.pushes), gapFills: Number(d.gapFills), gapAdded: Number(d.gapAdded) };
    });
  const pageBars = () => page.evaluate(() => (globalThis as any).klineDemo.bars() as { time: number; close?: number }[]);
  const history = async (from: number, to: number) => {
    const r = await api('GET', `/kline/api/v1/kline/ohlcv?chain_type=${pool.chain_type}&chain_id=${pool.chain_id}&pool_address=${pool.pool_address}&interval=1s&from=${from}&to=${to}&limit=5000`);
    expect(r.status, r.text).to.equal(200);
    return r.body.data as { open_time: number; close: number }[];
  };

  before(async function () {
    this.timeout(120_000);
    db = createDb({ url: env.databaseUrl, poolMax: 2 });
    await createRegistryTopics(prefix);
    // The page's pool is registered and activated here: an operator's key (D171).
    key = await createTestKey(db, 'kline-demo', { role: 'operator' });
    // The gateway on a fixed port, so that after its restart the page reconnects to the same address.
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    ({ sim, ingester, aggregator, alongside: gw } = await startCandlestickPipeline({
      prefix,
      redisPrefix: `${env.runId}:kline-demo:`,
      alongside: (s, common) =>
        AppProcess.start('apps/market-gateway/src/main.ts', { ...common, KAFKA_BROKERS: env.kafkaBrokers.join(','), PORT: String(port), KLINE_MARKET_API_URL: `${s.base}/coingecko/api/v3`, KLINE_WS_PING_MS: '1000' }),
    }));
    const created = await api('POST', '/api/v1/admin/pools', { body: { chain_type: 'evm', chain_id: 1, network_id: 'eth', pool_address: `0x${randomBytes(20).toString('hex')}`, label: 'demo page test' } });
    expect(created.status, created.text).to.equal(200);
    pool = (await api('PATCH', `/api/v1/admin/pools/${created.body.data.id}/activate`)).body.data;
    // A few seconds of 1s candles stored before the page opens: history has something to draw.
    await waitFor(async () => (await history(0, 9_999_999_999)).length >= 3, { timeoutMs: 30_000, what: 'first 1s candles stored' });
    browser = await launchChromium();
    page = await browser.context.newPage();
    page.on('pageerror', (err) => browserErrors.push(`pageerror: ${err.message}`));
    page.on('console', (m) => {
      if (m.type() === 'error' && !expectErrors) browserErrors.push(`console: ${m.text()}`);
    });
  });

  after(async () => {
    await browser?.close();
    if (pool) await db('kline.pools').where({ id: pool.id }).update({ is_active: false });
    await Promise.all([gw?.stop(), ...[ingester, aggregator, sim].filter(Boolean).map((p) => stopProcess(p.proc))]);
    await db?.destroy();
  });

  it('serves the page and its scripts as documented, without a key', async () => {
    const html = await api('GET', '/kline/demo', { key: null });
    expect(html.status).to.equal(200);
    expect(html.headers.get('content-type')).to.match(/^text\/html/);
    expect(html.headers.get('content-security-policy')).to.include("script-src 'self'");
    expect(html.text).to.include('<div id="chart">');
    for (const script of ['lightweight-charts.js', 'candles.js', 'page.js']) {
      const r = await api('GET', `/kline/demo/${script}`, { key: null });
      expect([r.status, r.headers.get('content-type')], script).to.deep.equal([200, 'application/javascript; charset=utf-8']);
    }
    expect((await api('GET', '/kline/demo/lightweight-charts.js', { key: null })).text).to.include('Lightweight Charts');
  });

  it('draws the history, then live updates move the last candle', async () => {
    await page.goto(`${base}/kline/demo#key=${key}&pool=${pool.id}&interval=1s`);
    // Browser-side code: this project's TypeScript has no DOM types, hence `any`.
    await page.waitForFunction(() => {
      const d = (globalThis as any).document.querySelector('#chart')?.dataset;
      return d?.subscriptions === '1' && Number(d.bars) >= 3;
    }, undefined, { timeout: 15_000 });
    expect(await page.$$eval('#chart canvas', (els) => els.length)).to.be.greaterThan(0);
    expect(await page.$eval('#pool', (el: any) => el.value)).to.equal(String(pool.id));
    expect(await page.textContent('#status')).to.match(/^live: evm:1:0x[0-9a-f]{40}:base 1s$/);
    // Every candle the history endpoint holds up to the page's newest one is drawn.
    const first = await chart();
    const drawn = new Set((await pageBars()).map((b) => b.time));
    const stored = (await history(0, first.lastTime)).map((c) => c.open_time);
    expect(stored.filter((t) => !drawn.has(t))).to.deep.equal([]);

    const moved = await waitFor(async () => {
      const now = await chart();
      return now.pushes > first.pushes && (now.lastTime > first.lastTime || now.lastClose !== first.lastClose) ? now : undefined;
    }, { timeoutMs: 10_000, what: 'a live push changing the last candle' });
    expect(moved.ws).to.equal('subscribed');
    expect(moved.bars).to.be.at.least(first.bars);
    expect(browserErrors).to.deep.equal([]);
  });

  it('after the server drops the socket, re-subscribes and fills the gap from history', async () => {
    const before = await chart();
    // The gateway stops (closing the socket, 1001) and stays down until candles of seconds after
    // it went down are stored (one of them closed, a later one begun); the page's reconnect
    // attempts fail until it is back.
    expectErrors = true;
    await gw.stop();
    const downAt = Math.floor(Date.now() / 1000);
    await waitFor(
      async () => Number((await db('kline.candles').where({ pool_id: pool.id, interval: '1s' }).where('open_time', '>', downAt).count<{ n: string }[]>({ n: '*' }))[0].n) >= 2,
      { timeoutMs: 20_000, what: 'candles stored while the gateway is down' },
    );
    await gw.start();
    const after = await waitFor(async () => {
      const c = await chart();
      return c.subscriptions === 2 && c.gapFills === 1 ? c : undefined;
    }, { timeoutMs: 20_000, what: 'the page re-subscribed and filled the gap' });
    expectErrors = false;
    // The seconds the page missed while the gateway was down came from history. How many the
    // store holds depends on the upstream's ticks on a loaded machine; what matters is that the
    // gap is not empty and that every candle of it is drawn as stored.
    expect(after.gapAdded).to.be.at.least(1);
    const bars = await pageBars();
    const drawn = new Map(bars.map((b) => [b.time, b.close]));
    const stored = await history(before.lastTime, after.lastTime - 2);
    expect(stored.filter((c) => c.open_time > downAt).length, 'candles stored while the gateway was down').to.be.at.least(1);
    expect(stored.filter((c) => !drawn.has(c.open_time)).map((c) => c.open_time), 'gap candles missing').to.deep.equal([]);
    // Closed candles read the same on the page as in the store.
    expect(stored.filter((c) => drawn.get(c.open_time) !== c.close).map((c) => c.open_time), 'gap candles differ').to.deep.equal([]);
    // Live again after the gap.
    await waitFor(async () => (await chart()).pushes > after.pushes, { timeoutMs: 10_000, what: 'live pushes after the reconnect' });

    mkdirSync(path.dirname(SCREENSHOT), { recursive: true });
    await page.screenshot({ path: SCREENSHOT });
    expect(browserErrors).to.deep.equal([]);
  });
});
