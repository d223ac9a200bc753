import { expect } from 'chai';
import { seededRandom } from '@chainpipe/testing';
import {
  applyContribution,
  contributionOf,
  withContribution,
  foldUpdates,
  mergeSnapshot,
  planCandleWrites,
  rollForward,
  rollUpDaily,
  type CandleState,
  type Contribution,
  type OhlcvRecord,
  type PoolUpdate,
} from '../src';

const T0 = Date.parse('2026-11-24T07:00:00Z') / 1000;

function upd(second: number, o: number, h: number, l: number, c: number, v: number, rank: number): PoolUpdate {
  return { pool_id: 1, interval: '1s', open_time: T0 + second, open: o, high: h, low: l, close: c, volume: v, rank };
}

/** Applies base updates one by one as the aggregator does (base merge, then roll forward into stored longer candles). */
function simulate(updates: PoolUpdate[]): Map<string, CandleState | Contribution> {
  const stored = new Map<string, CandleState | Contribution>();
  for (const u of updates) {
    const folded = [...foldUpdates([u]).values()][0];
    const id = `1s|${folded.key.open_time}`;
    const before = stored.get(id) as CandleState | undefined;
    const after = before ? mergeSnapshot(before, { ...u, open_time: folded.key.open_time }) : folded.state;
    stored.set(id, after);
    for (const { key, contribution } of rollForward([{ key: folded.key, before, after }]).values()) {
      const kid = `${key.interval}|${key.open_time}`;
      const prev = stored.get(kid) as Contribution | undefined;
      stored.set(kid, applyContribution(prev ? { ...prev, volume_delta: 0 } : undefined, prev ? contribution : { ...contribution, volume: contribution.volume_delta }));
    }
  }
  return stored;
}

const pick = (s: CandleState | Contribution | undefined) => s && { open: s.open, high: s.high, low: s.low, close: s.close, volume: s.volume };

describe('candle merging', () => {
  // Second 0 gets three snapshots (volume 1 → 3 → 4, close 10 → 12 → 9); second 30 two (5 → 7).
  const updates = [
    upd(0, 10, 10, 10, 10, 1, 1),
    upd(0, 10, 12, 10, 12, 3, 2),
    upd(0, 10, 12, 8, 9, 4, 3),
    upd(30, 9, 11, 9, 11, 5, 4),
    upd(30, 9, 15, 7, 14, 7, 5),
  ];
  // Hand-computed 1m candle: open 10 (first second's open), high 15, low 7, close 14 (last update
  // of the last second), volume 4 + 7 = 11 (final volume of each second).
  const expected1m = { open: 10, high: 15, low: 7, close: 14, volume: 11 };

  it('builds the 1s and every longer candle from snapshots in order', () => {
    const s = simulate(updates);
    expect(pick(s.get(`1s|${T0}`))).to.deep.equal({ open: 10, high: 12, low: 8, close: 9, volume: 4 });
    expect(pick(s.get(`1m|${T0}`))).to.deep.equal(expected1m);
    expect(pick(s.get(`1d|${Date.parse('2026-11-24T00:00:00Z') / 1000}`))).to.deep.equal(expected1m);
  });

  it('gives the same candles for any order and with duplicates (seeded shuffles)', () => {
    const rnd = seededRandom(16);
    for (let round = 0; round < 50; round++) {
      const list = [...updates, ...updates.filter(() => rnd() < 0.5)];
      for (let i = list.length - 1; i > 0; i--) {
        const j = Math.floor(rnd() * (i + 1));
        [list[i], list[j]] = [list[j], list[i]];
      }
      const s = simulate(list);
      expect(pick(s.get(`1m|${T0}`)), `round ${round}`).to.deep.equal(expected1m);
      expect(pick(s.get(`1s|${T0 + 30}`))).to.deep.equal({ open: 9, high: 15, low: 7, close: 14, volume: 7 });
    }
  });

  it('folds a batch into one snapshot per base candle, whatever the order', () => {
    const a = foldUpdates(updates);
    const b = foldUpdates([...updates].reverse());
    expect(a.size).to.equal(2);
    expect([...a.values()].map((x) => pick(x.state))).to.deep.equal([...b.values()].map((x) => pick(x.state)).reverse());
  });

  it('keeps nulls where the upstream had no value', () => {
    const s = mergeSnapshot(undefined, { interval: '1s', open_time: T0, open: null, high: null, low: null, close: null, volume: null, rank: 1 });
    const s2 = mergeSnapshot(s, { interval: '1s', open_time: T0, open: 5, high: 6, low: 4, close: 5, volume: null, rank: 2 });
    expect(pick(s2)).to.deep.equal({ open: 5, high: 6, low: 4, close: 5, volume: null });
  });
});

/**
 * A batch as the aggregator stores it: folded, and every candle it writes planned on the stored
 * ones (planCandleWrites: base candles merged, longer ones given their contributions).
 */
function applyBatch(stored: Map<string, CandleState>, batch: PoolUpdate[]): void {
  const id = (k: { interval: string; open_time: number }) => `${k.interval}|${k.open_time}`;
  const writes = planCandleWrites([...foldUpdates(batch).values()], (key) => {
    const state = stored.get(id(key));
    return state && { state, version: '1' };
  });
  for (const w of writes) stored.set(id(w.key), w.state);
}

describe('replaying a batch (at-least-once delivery)', () => {
  // Two batches of one pool: second 0 (volume 1 → 4, close 9 last) and second 30 (5 → 7, close 14).
  const first = [upd(0, 10, 10, 10, 10, 1, 1), upd(0, 10, 12, 10, 12, 3, 2), upd(0, 10, 12, 8, 9, 4, 3)];
  const second = [upd(30, 9, 11, 9, 11, 5, 4), upd(30, 9, 15, 7, 14, 7, 5)];
  // Hand-computed: 1s at 0 {10, 12, 8, 9, 4}; 1s at 30 {9, 15, 7, 14, 7}; 1m … 1d {10, 15, 7, 14, 11}.
  const day = Date.parse('2026-11-24T00:00:00Z') / 1000;
  const expected = new Map<string, ReturnType<typeof pick>>([
    [`1s|${T0}`, { open: 10, high: 12, low: 8, close: 9, volume: 4 }],
    [`1s|${T0 + 30}`, { open: 9, high: 15, low: 7, close: 14, volume: 7 }],
    [`1m|${T0}`, { open: 10, high: 15, low: 7, close: 14, volume: 11 }],
    [`15m|${T0}`, { open: 10, high: 15, low: 7, close: 14, volume: 11 }],
    [`1h|${T0}`, { open: 10, high: 15, low: 7, close: 14, volume: 11 }],
    [`4h|${Date.parse('2026-11-24T04:00:00Z') / 1000}`, { open: 10, high: 15, low: 7, close: 14, volume: 11 }],
    [`1d|${day}`, { open: 10, high: 15, low: 7, close: 14, volume: 11 }],
    [`1w|${Date.parse('2026-11-23T00:00:00Z') / 1000}`, { open: 10, high: 15, low: 7, close: 14, volume: 11 }],
    [`1M|${Date.parse('2026-11-01T00:00:00Z') / 1000}`, { open: 10, high: 15, low: 7, close: 14, volume: 11 }],
    [`1Y|${Date.parse('2026-01-01T00:00:00Z') / 1000}`, { open: 10, high: 15, low: 7, close: 14, volume: 11 }],
  ]);
  const snapshot = (stored: Map<string, CandleState>) => new Map([...stored].map(([k, v]) => [k, pick(v)]));

  it('leaves the same candles when the last batch, or both, are delivered again', () => {
    const stored = new Map<string, CandleState>();
    applyBatch(stored, first);
    applyBatch(stored, second);
    expect(snapshot(stored)).to.deep.equal(expected);
    applyBatch(stored, second);
    expect(snapshot(stored), 'the last batch replayed').to.deep.equal(expected);
    applyBatch(stored, first);
    applyBatch(stored, second);
    expect(snapshot(stored), 'both replayed').to.deep.equal(expected);
  });

  it('leaves the same candles when a replay overlaps the next batch', () => {
    const stored = new Map<string, CandleState>();
    applyBatch(stored, first.slice(0, 2));
    // A crash after storing the first two updates: the consumer re-reads them with the rest.
    applyBatch(stored, [...first, ...second]);
    expect(snapshot(stored)).to.deep.equal(expected);
  });
});

describe('weeks, months and years fed by the base candles', () => {
  const DAY = 86_400;
  const START = Date.parse('2026-12-20T00:00:00Z') / 1000;

  it('equal the roll-ups of their stored days, whatever the order and the batches (seeded)', () => {
    const rnd = seededRandom(115);
    for (let trial = 0; trial < 40; trial++) {
      // Updates of 1s candles over 20 days around a month's and a year's end: a few seconds a
      // day, snapshots of each with growing volume (some without one), in a shuffled order, in
      // batches of random sizes.
      const updates: PoolUpdate[] = [];
      let rank = 1;
      for (let d = 0; d < 20; d++) {
        if (rnd() < 0.3) continue;
        for (let k = 0; k < 1 + Math.floor(rnd() * 3); k++) {
          const second = START + d * DAY + Math.floor(rnd() * DAY);
          const open = 1 + Math.floor(rnd() * 100);
          let volume = rnd() < 0.2 ? null : 0;
          for (let snap = 0; snap < 1 + Math.floor(rnd() * 3); snap++) {
            if (volume !== null) volume += Math.floor(rnd() * 10);
            const close = 1 + Math.floor(rnd() * 100);
            updates.push({ pool_id: 1, interval: '1s', open_time: second, open, high: Math.max(open, close) + 1, low: Math.min(open, close) - 0.5, close, volume, rank: rank++ });
          }
        }
      }
      for (let i = updates.length - 1; i > 0; i--) {
        const j = Math.floor(rnd() * (i + 1));
        [updates[i], updates[j]] = [updates[j], updates[i]];
      }
      const stored = new Map<string, CandleState>();
      for (let at = 0; at < updates.length; ) {
        const size = 1 + Math.floor(rnd() * 8);
        applyBatch(stored, updates.slice(at, at + size));
        at += size;
      }
      const of = (interval: string): OhlcvRecord[] =>
        [...stored]
          .filter(([id]) => id.startsWith(`${interval}|`))
          .map(([id, s]) => ({ pool_id: 1, interval: interval as OhlcvRecord['interval'], open_time: Number(id.split('|')[1]), ...pick(s)! }))
          .sort((a, b) => a.open_time - b.open_time);
      for (const interval of ['1w', '1M', '1Y'] as const) expect(of(interval), `trial ${trial}, ${interval}`).to.deep.equal(rollUpDaily(interval, of('1d')));
    }
  });
});

describe('1w / 1M / 1Y roll-ups from daily candles', () => {
  const day = (iso: string, o: number, h: number, l: number, c: number, v: number | null): OhlcvRecord => ({
    pool_id: 7,
    interval: '1d',
    open_time: Date.parse(iso) / 1000,
    open: o,
    high: h,
    low: l,
    close: c,
    volume: v,
  });
  // Sun 2026-11-22, Mon 11-23, Tue 11-24, Mon 11-30, Tue 12-01.
  const days = [
    day('2026-11-24T00:00:00Z', 3, 9, 2, 4, 10),
    day('2026-11-22T00:00:00Z', 1, 5, 1, 2, 5),
    day('2026-11-23T00:00:00Z', 2, 6, 1.5, 3, null),
    day('2026-11-30T00:00:00Z', 4, 4.5, 3.5, 4.2, 1),
    day('2026-12-01T00:00:00Z', 4.2, 8, 4, 7, 2),
  ];

  it('weeks: Monday to Sunday', () => {
    // Week of Nov 16: only Sunday the 22nd. Week of Nov 23: Mon (open 2) + Tue (close 4), high 9,
    // low 1.5, volume null + 10 = 10. Week of Nov 30: Mon + Tue → open 4, close 7, high 8, low 3.5, volume 3.
    expect(rollUpDaily('1w', days)).to.deep.equal([
      { pool_id: 7, interval: '1w', open_time: Date.parse('2026-11-16T00:00:00Z') / 1000, open: 1, high: 5, low: 1, close: 2, volume: 5 },
      { pool_id: 7, interval: '1w', open_time: Date.parse('2026-11-23T00:00:00Z') / 1000, open: 2, high: 9, low: 1.5, close: 4, volume: 10 },
      { pool_id: 7, interval: '1w', open_time: Date.parse('2026-11-30T00:00:00Z') / 1000, open: 4, high: 8, low: 3.5, close: 7, volume: 3 },
    ]);
  });

  it('months and years', () => {
    // November: 22nd–30th → open 1 (22nd), close 4.2 (30th), high 9, low 1, volume 5 + 10 + 1 = 16.
    expect(rollUpDaily('1M', days)).to.deep.equal([
      { pool_id: 7, interval: '1M', open_time: Date.parse('2026-11-01T00:00:00Z') / 1000, open: 1, high: 9, low: 1, close: 4.2, volume: 16 },
      { pool_id: 7, interval: '1M', open_time: Date.parse('2026-12-01T00:00:00Z') / 1000, open: 4.2, high: 8, low: 4, close: 7, volume: 2 },
    ]);
    expect(rollUpDaily('1Y', days)).to.deep.equal([
      { pool_id: 7, interval: '1Y', open_time: Date.parse('2026-01-01T00:00:00Z') / 1000, open: 1, high: 9, low: 1, close: 7, volume: 18 },
    ]);
  });
});

describe('a backfilled minute over a minute fed by its seconds', () => {
  // Seconds 20 and 40 of the minute were heard live (their 1m row: open 11 of second 20, volume
  // 3 + 4); the upstream's REST minute (a 1m update) has the whole minute: open 10 at second 0,
  // high 16, low 6, close 13, volume 12.
  const seconds: PoolUpdate[] = [upd(20, 11, 12, 11, 12, 3, 1), upd(40, 12, 14, 12, 13, 4, 2)];
  const minute: PoolUpdate = { pool_id: 1, interval: '1m', open_time: T0, open: 10, high: 16, low: 6, close: 13, volume: 12, rank: 3 };

  it('takes the whole minute: its open, extremes, close and volume, in either order', () => {
    const liveFirst = planCandleWrites([...foldUpdates(seconds).values()], () => undefined);
    const fed = liveFirst.find((w) => w.key.interval === '1m')!;
    expect(pick(fed.state)).to.deep.equal({ open: 11, high: 14, low: 11, close: 13, volume: 7 });
    const merged = mergeSnapshot(fed.state, minute);
    expect(pick(merged)).to.deep.equal({ open: 10, high: 16, low: 6, close: 13, volume: 12 });
    // The other way round: the minute first, then its seconds' contributions (a late delivery):
    // open, extremes and close stay the minute's.
    const minuteFirst = mergeSnapshot(undefined, minute);
    const withSeconds = liveFirst.filter((w) => w.key.interval === '1s').reduce((s, w) => withContribution(s, contributionOf(undefined, w.state)), minuteFirst);
    expect(pick(withSeconds)).to.deep.include({ open: 10, high: 16, low: 6, close: 13 });
  });
});
