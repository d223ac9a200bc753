import { readFileSync } from 'node:fs';
import path from 'node:path';
import { runInNewContext } from 'node:vm';
import { expect } from 'chai';
import { loadContracts } from '@chainpipe/contracts';
import { ApiRoutes, openApiDocument } from '@chainpipe/http';
import { demoRoutes } from '../src/kline/demo.routes';
import { klineEnvelopeFor } from '../src/kline/envelope';

/**
 * The live chart page's candle logic, run from the very file the browser loads (candles.js,
 * evaluated in a fresh context the way a <script> tag runs it), and how the page's routes are
 * documented.
 */
function loadCandles(): any {
  const sandbox: Record<string, unknown> = { URLSearchParams };
  sandbox.globalThis = sandbox;
  runInNewContext(readFileSync(path.join(__dirname, '../src/kline/demo/candles.js'), 'utf8'), sandbox);
  return sandbox.KlineCandles;
}

const K = loadCandles();
const candle = (t: number, close: number, extra: Record<string, unknown> = {}) => ({ pool_id: 1, interval: '1m', open_time: t, open: 1, high: Math.max(1, close), low: Math.min(1, close), close, volume: 1, ...extra });
const times = (book: any) => book.bars().map((b: any) => b.time);

describe('live chart page: candle logic (candles.js)', () => {
  it('upserts history by open_time, sorted, counting only real changes', () => {
    const book = new K.CandleBook();
    expect(book.applyHistory([candle(180, 3), candle(60, 1), candle(120, 2)])).to.equal(3);
    expect(times(book)).to.deep.equal([60, 120, 180]);
    expect(book.lastTime).to.equal(180);
    expect(book.applyHistory([candle(120, 2), candle(180, 4)])).to.equal(1);
    expect(book.bars()[2]).to.deep.include({ time: 180, close: 4 });
    expect(book.size).to.equal(3);
  });

  it('takes a push at or after the newest candle as a tail update, an older one as a reset', () => {
    const book = new K.CandleBook();
    expect(book.applyPush(candle(60, 1)).apply).to.equal('tail');
    expect(book.applyPush(candle(60, 1.5))).to.deep.equal({ bar: { time: 60, open: 1, high: 1.5, low: 1, close: 1.5 }, apply: 'tail' });
    expect(book.applyPush(candle(120, 2)).apply).to.equal('tail');
    expect(book.applyPush(candle(0, 0.5)).apply).to.equal('reset');
    expect(times(book)).to.deep.equal([0, 60, 120]);
  });

  it('never lets history overwrite a candle pushed since the subscription began', () => {
    const book = new K.CandleBook();
    book.beginSubscription();
    book.applyPush(candle(120, 9));
    // A history answer read before that push reached the store: older values of 120, and a gap candle 60.
    expect(book.applyHistory([candle(60, 1), candle(120, 2)])).to.equal(1);
    expect(book.bars().map((b: any) => [b.time, b.close])).to.deep.equal([[60, 1], [120, 9]]);
    // A new subscription (after a reconnect): pushes from before it no longer win.
    book.beginSubscription();
    expect(book.applyHistory([candle(120, 10)])).to.equal(1);
    expect(book.bars()[1].close).to.equal(10);
  });

  it('draws a candle without prices as an empty slot', () => {
    expect(K.toBar(candle(60, 1, { open: null, high: null, low: null, close: null, volume: null }))).to.deep.equal({ time: 60 });
  });

  it('asks history for the last HISTORY_BARS candles first, then from the newest candle held, never further back', () => {
    const sel = { chain_type: 'evm', chain_id: 1, pool_address: '0xAbC', token: 'base', interval: '1m' };
    const now = 1_800_000_000_000;
    const first = K.historyQuery(sel, now, undefined);
    expect(first).to.deep.equal({ chain_type: 'evm', chain_id: '1', pool_address: '0xAbC', interval: '1m', from: String(1_800_000_000 - 500 * 60), to: '1800000000', limit: '1000' });
    expect(K.historyQuery(sel, now, 1_800_000_000 - 180).from).to.equal(String(1_800_000_000 - 180));
    expect(K.historyQuery(sel, now, 1_000).from).to.equal(first.from);
    // Every interval's window fits one request.
    for (const interval of K.INTERVALS) {
      const q = K.historyQuery({ ...sel, interval }, now, undefined);
      expect((Number(q.to) - Number(q.from)) / K.INTERVAL_SECONDS[interval], interval).to.be.at.most(K.HISTORY_LIMIT - 1);
    }
  });

  it('keeps only pushes of the chart pool and interval; builds the spec commands', () => {
    const sel = { chain_type: 'evm', chain_id: 1, pool_address: '0xAbC', token: 'base', interval: '1m' };
    const push = { chain_type: 'evm', chain_id: 1, pool_address: '0xabc', token: 'base', interval: '1m', open_time: 60 };
    expect(K.matchesSelection(push, sel)).to.equal(true);
    expect(K.matchesSelection({ ...push, interval: '1h' }, sel)).to.equal(false);
    expect(K.matchesSelection({ ...push, chain_id: 56 }, sel)).to.equal(false);
    expect(K.matchesSelection({ ...push, pool_address: '0xabd' }, sel)).to.equal(false);
    expect(K.matchesSelection(push, null)).to.equal(false);
    expect(K.subscribeCommand(sel, 's1')).to.deep.equal({ id: 's1', type: 'subscribe', data: { chain_type: 'evm', chain_id: 1, pool_address: '0xAbC', token: 'base', intervals: ['1m'] } });
    expect(K.unsubscribeCommand(sel, 'u1')).to.deep.equal({ id: 'u1', type: 'unsubscribe', data: { chain_type: 'evm', chain_id: 1, pool_address: '0xAbC' } });
  });

  it('backs off 250 ms doubling to 5 s with ±25% jitter', () => {
    expect([0, 1, 2, 3, 4, 5, 9].map((a) => K.reconnectDelay(a, () => 0.5))).to.deep.equal([250, 500, 1000, 2000, 4000, 5000, 5000]);
    expect(K.reconnectDelay(0, () => 0)).to.equal(188);
    expect(K.reconnectDelay(9, () => 1)).to.equal(6250);
  });

  it('shows about five significant digits of a price', () => {
    expect([3000, 42.5, 1, 0.5, 0.000123, 0, NaN].map(K.pricePrecision)).to.deep.equal([2, 3, 4, 5, 8, 2, 2]);
  });

  it('reads key, pool and interval from the URL fragment, ignoring an unknown interval', () => {
    expect(K.fragmentSettings('#key=cpk_a_b&pool=7&interval=1s')).to.deep.equal({ key: 'cpk_a_b', pool: '7', interval: '1s' });
    expect(K.fragmentSettings('#interval=5m')).to.deep.equal({ key: '', pool: '', interval: '' });
    expect(K.fragmentSettings('')).to.deep.equal({ key: '', pool: '', interval: '' });
  });
});

describe('live chart page: routes in the API document', () => {
  it('documents the page as text/html and its scripts as application/javascript, without a key, in the candlestick envelope', () => {
    const api = new ApiRoutes({ contracts: loadContracts() });
    demoRoutes(api);
    const doc = openApiDocument(api, { title: 't', version: '1' }, (p) => klineEnvelopeFor(p)!);
    const media = Object.fromEntries(Object.entries(doc.paths).map(([p, ops]) => [p, Object.keys(ops.get.responses['200'].content ?? {})]));
    expect(media).to.deep.equal({
      '/kline/demo': ['text/html'],
      '/kline/demo/lightweight-charts.js': ['application/javascript'],
      '/kline/demo/candles.js': ['application/javascript'],
      '/kline/demo/page.js': ['application/javascript'],
    });
    for (const ops of Object.values(doc.paths)) {
      expect(ops.get.security).to.deep.equal([]);
      expect(ops.get.responses['500'].content?.['application/json'].schema).to.deep.equal({ $ref: '#/components/schemas/error-envelope.kline' });
    }
  });
});
