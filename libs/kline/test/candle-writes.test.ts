import { expect } from 'chai';
import { KnownCandles, foldUpdates, planCandleWrites, type CandleKey, type CandleState, type KnownCandle, type PoolUpdate } from '../src';

const T0 = Date.parse('2026-11-24T07:00:00Z') / 1000;
const DAY = Date.parse('2026-11-24T00:00:00Z') / 1000;

const update = (interval: '1s' | '1m', openTime: number, o: number, h: number, l: number, c: number, v: number, rank: number): PoolUpdate => ({
  pool_id: 7,
  interval,
  open_time: openTime,
  open: o,
  high: h,
  low: l,
  close: c,
  volume: v,
  rank,
});
const state = (o: number, h: number, l: number, c: number, v: number, src: number, rank: number): CandleState => ({ open: o, high: h, low: l, close: c, volume: v, open_src: src, close_src_time: src, close_src_rank: rank });
const ohlcv = (s: CandleState) => ({ open: s.open, high: s.high, low: s.low, close: s.close, volume: s.volume });
const at = (pool_id: number, interval: CandleKey['interval'], open_time: number): CandleKey => ({ pool_id, interval, open_time });

describe('planCandleWrites: the rows a call writes whole', () => {
  const folded = () => [...foldUpdates([update('1s', T0, 10, 12, 9, 11, 4, 1), update('1s', T0 + 1, 11, 13, 10, 12, 2, 2)]).values()];

  it('with nothing stored, inserts every candle: two seconds and each longer one they feed once', () => {
    const writes = planCandleWrites(folded(), () => undefined);
    expect(writes.every((w) => w.version === undefined), 'all inserts').to.equal(true);
    expect(writes.map((w) => w.key.interval)).to.deep.equal(['1s', '1s', '15m', '1M', '1Y', '1d', '1h', '1m', '1w', '4h']);
    // Hand-computed: open of the first second, extremes 13 / 9, close of the last second, volume 4 + 2.
    for (const w of writes.slice(2)) expect(ohlcv(w.state), w.key.interval).to.deep.equal({ open: 10, high: 13, low: 9, close: 12, volume: 6 });
  });

  it('updates what is stored, at the version it was read at, merged on its stored state', () => {
    // Stored: the first second with volume 3 (now 4: the day grows by 1), and the day with volume 50.
    const stored = new Map<string, KnownCandle>([
      [`1s|${T0}`, { state: state(10, 11, 9.5, 10.5, 3, T0, 0), version: '41' }],
      [`1d|${DAY}`, { state: state(8, 20, 7, 9, 50, DAY, 0), version: '42' }],
    ]);
    const writes = planCandleWrites(folded(), (k) => stored.get(`${k.interval}|${k.open_time}`));
    const byKey = new Map(writes.map((w) => [`${w.key.interval}|${w.key.open_time}`, w]));
    expect(byKey.get(`1s|${T0}`)).to.deep.include({ version: '41' });
    expect(ohlcv(byKey.get(`1s|${T0}`)!.state)).to.deep.equal({ open: 10, high: 12, low: 9, close: 11, volume: 4 });
    expect(byKey.get(`1d|${DAY}`)).to.deep.include({ version: '42' });
    // The day: open and low kept (8 opened earlier, 7 is lower), high 20 kept, close of the later
    // second, volume 50 + (4 - 3) + 2.
    expect(ohlcv(byKey.get(`1d|${DAY}`)!.state)).to.deep.equal({ open: 8, high: 20, low: 7, close: 12, volume: 53 });
    expect(byKey.get(`1h|${T0}`)!.version, 'not stored: inserted').to.equal(undefined);
    // The hour is new: it takes the growth only of the stored second (1), and the new second's 2.
    expect(ohlcv(byKey.get(`1h|${T0}`)!.state)).to.deep.equal({ open: 10, high: 13, low: 9, close: 12, volume: 3 });
  });

  it('writes a candle that is both a base and a longer one (a pool fed in 1s and 1m) once, both applied', () => {
    const both = [...foldUpdates([update('1m', T0, 20, 25, 19, 24, 100, 5), update('1s', T0 + 30, 21, 30, 20, 22, 7, 6)]).values()];
    const writes = planCandleWrites(both, () => undefined);
    const minutes = writes.filter((w) => w.key.interval === '1m');
    expect(minutes, 'one write of the minute').to.have.length(1);
    // The minute's own snapshot (open 20, close 24 at rank 5), then the second at 30 s: high 30,
    // low stays 19, close 22 (a later base candle), volume 100 + 7.
    expect(ohlcv(minutes[0].state)).to.deep.equal({ open: 20, high: 30, low: 19, close: 22, volume: 107 });
    const keys = writes.map((w) => `${w.key.interval}|${w.key.open_time}`);
    expect(new Set(keys).size, 'each row once').to.equal(keys.length);
  });
});

describe('KnownCandles: what this process wrote last', () => {
  const s = state(1, 2, 0.5, 1.5, 3, T0, 1);

  it('gives back what was remembered, at the version of its write', () => {
    const known = new KnownCandles();
    known.remember([{ key: at(1, '1s', T0), state: s }, { key: at(1, '1m', T0), state: s }], '100');
    expect(known.get(at(1, '1s', T0))).to.deep.include({ state: s, version: '100' });
    expect(known.get(at(1, '1m', T0))?.version).to.equal('100');
    expect(known.get(at(1, '1h', T0)), 'another interval').to.equal(undefined);
    expect(known.get(at(2, '1s', T0)), 'another pool').to.equal(undefined);
    known.remember([{ key: at(1, '1s', T0), state: s }], '101');
    expect(known.get(at(1, '1s', T0))?.version, 'a later write').to.equal('101');
  });

  it('gives back every field as written, null prices and source fields included', () => {
    const known = new KnownCandles();
    const withNulls: CandleState = { open: null, high: 2.5, low: null, close: -0.125, volume: null, open_src: T0 - 60, close_src_time: T0 + 59, close_src_rank: 2 ** 52 + 1 };
    const large: CandleState = { open: 1e-300, high: Number.MAX_VALUE, low: 0, close: 123456.789, volume: 0, open_src: T0, close_src_time: T0, close_src_rank: 0 };
    known.remember([{ key: at(7, '1h', T0), state: withNulls }, { key: at(7, '1Y', T0), state: large }], '4294967295');
    expect(known.get(at(7, '1h', T0))).to.deep.equal({ state: withNulls, version: '4294967295' });
    expect(known.get(at(7, '1Y', T0))).to.deep.equal({ state: large, version: '4294967295' });
    expect(known.get(at(7, '1h', T0))?.state, 'a copy: the caller may change it').to.not.equal(withNulls);
  });

  it('keeps the two newest periods of a pool and interval, whatever order they are written in', () => {
    const known = new KnownCandles();
    for (const t of [T0 + 2, T0, T0 + 1, T0 + 3]) known.remember([{ key: at(1, '1s', t), state: s }], String(t));
    expect([T0, T0 + 1, T0 + 2, T0 + 3].map((t) => known.get(at(1, '1s', t))?.version)).to.deep.equal([undefined, undefined, String(T0 + 2), String(T0 + 3)]);
  });

  it('forgets the pools named, and every pool once more than its bound are written', () => {
    const known = new KnownCandles(3);
    for (const pool of [1, 2, 3]) known.remember([{ key: at(pool, '1s', T0), state: s }], '9');
    known.forget([2]);
    expect([1, 2, 3].map((p) => known.get(at(p, '1s', T0)) !== undefined)).to.deep.equal([true, false, true]);
    known.remember([{ key: at(4, '1s', T0), state: s }], '9');
    known.remember([{ key: at(5, '1s', T0), state: s }], '9');
    expect(known.size, 'the fourth pool kept, then the bound passed: only the newest').to.equal(1);
    expect(known.get(at(5, '1s', T0))).to.not.equal(undefined);
  });
});
