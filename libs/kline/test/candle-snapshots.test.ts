import { expect } from 'chai';
import { SNAPSHOT_TIME_WIDTH, candleSnapshot, candlesHead, candlesMessage, type CandleValues } from '../src';

const head = candlesHead(7, { chain_type: 'evm', chain_id: 56, pool_address: '0xabc', token: 'base' }, 1_700_000_000_000);
const candle = (interval: CandleValues['interval'], open_time: number, close: number): CandleValues => ({ interval, open_time, open: 1, high: 2, low: 0.5, close, volume: 3 });
const record = (candles: CandleValues[]) => {
  const value = candlesMessage(head, candles);
  return { value, json: JSON.stringify(value) };
};
/** The times' slots read back as open times (-1: none), in INTERVALS' order (1s 1m 15m 1h 4h 1d 1w 1M 1Y). */
const slots = (times: string) => Array.from({ length: times.length / SNAPSHOT_TIME_WIDTH }, (_, i) => Number(times.slice(i * SNAPSHOT_TIME_WIDTH, (i + 1) * SNAPSHOT_TIME_WIDTH)) - 1);

describe('candleSnapshot: what the latest-candles store keeps of a record', () => {
  it("keeps a record of one candle an interval as its own JSON, the open times in the intervals' slots", () => {
    const r = record([candle('1m', 1_800_000_000, 4), candle('1s', 1_800_000_001, 3), candle('1Y', 1_798_761_600, 6)]);
    const snap = candleSnapshot(r);
    expect(snap.json).to.equal(r.json);
    expect(snap.times).to.have.length(9 * SNAPSHOT_TIME_WIDTH);
    expect(slots(snap.times)).to.deep.equal([1_800_000_001, 1_800_000_000, -1, -1, -1, -1, -1, -1, 1_798_761_600]);
  });

  it('keeps the latest candle of an interval, the later in the record of two with one open time', () => {
    const r = record([candle('1s', 1_800_000_021, 21), candle('1s', 1_800_000_020, 20), candle('1m', 1_800_000_000, 5), candle('1s', 1_800_000_021, 22)]);
    const snap = candleSnapshot(r);
    const kept = JSON.parse(snap.json) as ReturnType<typeof candlesMessage>;
    expect(kept).to.deep.equal({ ...head, candles: [candle('1s', 1_800_000_021, 22), candle('1m', 1_800_000_000, 5)] });
    expect(slots(snap.times).slice(0, 2)).to.deep.equal([1_800_000_021, 1_800_000_000]);
  });

  it('gives times that compare slot by slot as text as the open times do as numbers', () => {
    const earlier = candleSnapshot(record([candle('1s', 999_999_999, 1)])).times;
    const later = candleSnapshot(record([candle('1s', 1_000_000_000, 1)])).times;
    expect(earlier < later, 'one more digit').to.equal(true);
    const none = '0'.repeat(SNAPSHOT_TIME_WIDTH);
    const atZero = candleSnapshot(record([candle('1d', 0, 1)])).times;
    expect(atZero.slice(5 * SNAPSHOT_TIME_WIDTH, 6 * SNAPSHOT_TIME_WIDTH) > none, 'a candle opening at 0 is more than none').to.equal(true);
    expect(atZero.slice(0, SNAPSHOT_TIME_WIDTH)).to.equal(none);
  });

  it('gives the same times with slot texts kept across records, keyed by open time', () => {
    const texts = new Map<number, string>();
    const first = record([candle('1s', 1_800_000_001, 1), candle('1m', 1_800_000_000, 1)]);
    const second = record([candle('1s', 1_800_000_002, 2), candle('1m', 1_800_000_000, 2)]);
    expect(candleSnapshot(first, texts).times).to.equal(candleSnapshot(first).times);
    expect(candleSnapshot(second, texts).times).to.equal(candleSnapshot(second).times);
    expect([...texts.keys()].sort()).to.deep.equal([1_800_000_000, 1_800_000_001, 1_800_000_002]);
  });

  it('refuses a candle of an interval it does not know', () => {
    expect(() => candleSnapshot(record([{ ...candle('1s', 1, 1), interval: '2s' as CandleValues['interval'] }]))).to.throw(/unknown interval: 2s/);
  });
});
