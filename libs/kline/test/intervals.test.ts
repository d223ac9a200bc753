import { expect } from 'chai';
import { alignOpenTime, intervalsFedBy, nextOpenTime } from '../src/intervals';

const utc = (iso: string) => Date.parse(iso) / 1000;

describe('kline intervals', () => {
  it('aligns fixed intervals to multiples of their length', () => {
    const t = utc('2026-11-24T07:23:45Z');
    expect(alignOpenTime('1s', t + 0.7)).to.equal(t);
    expect(alignOpenTime('1m', t)).to.equal(utc('2026-11-24T07:23:00Z'));
    expect(alignOpenTime('15m', t)).to.equal(utc('2026-11-24T07:15:00Z'));
    expect(alignOpenTime('1h', t)).to.equal(utc('2026-11-24T07:00:00Z'));
    expect(alignOpenTime('4h', t)).to.equal(utc('2026-11-24T04:00:00Z'));
    expect(alignOpenTime('1d', t)).to.equal(utc('2026-11-24T00:00:00Z'));
  });

  it('starts weeks on Monday 00:00 UTC (2026-11-24 is a Tuesday; 2026-11-23 a Monday)', () => {
    expect(alignOpenTime('1w', utc('2026-11-24T07:23:45Z'))).to.equal(utc('2026-11-23T00:00:00Z'));
    expect(alignOpenTime('1w', utc('2026-11-23T00:00:00Z'))).to.equal(utc('2026-11-23T00:00:00Z'));
    // Sunday late evening belongs to the week that began six days earlier.
    expect(alignOpenTime('1w', utc('2026-11-22T23:59:59Z'))).to.equal(utc('2026-11-16T00:00:00Z'));
    expect(nextOpenTime('1w', utc('2026-11-23T00:00:00Z'))).to.equal(utc('2026-11-30T00:00:00Z'));
  });

  it('starts months and years on their first day UTC, leap years included', () => {
    expect(alignOpenTime('1M', utc('2028-02-29T12:00:00Z'))).to.equal(utc('2028-02-01T00:00:00Z'));
    expect(nextOpenTime('1M', utc('2028-02-01T00:00:00Z'))).to.equal(utc('2028-03-01T00:00:00Z'));
    expect(nextOpenTime('1M', utc('2026-12-01T00:00:00Z'))).to.equal(utc('2027-01-01T00:00:00Z'));
    expect(alignOpenTime('1Y', utc('2026-11-24T07:23:45Z'))).to.equal(utc('2026-01-01T00:00:00Z'));
    expect(nextOpenTime('1Y', utc('2026-01-01T00:00:00Z'))).to.equal(utc('2027-01-01T00:00:00Z'));
  });

  it('feeds every longer stored interval from a shorter one', () => {
    expect(intervalsFedBy('1s')).to.deep.equal(['1s', '1m', '15m', '1h', '4h', '1d']);
    expect(intervalsFedBy('1h')).to.deep.equal(['1h', '4h', '1d']);
  });
});
