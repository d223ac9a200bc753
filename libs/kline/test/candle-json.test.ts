import { expect } from 'chai';
import fc from 'fast-check';
import { candlesHead, candlesMessage, poolCandle, type CandleValues } from '../src/candle-messages';
import { candlesMessageJson, encodePoolCandles, poolCandleJson } from '../src/candle-json';
import { INTERVALS } from '../src/intervals';

/**
 * The aggregator writes each candle's JSON once and sends it to Redis and Kafka from those parts:
 * they must be exactly what JSON.stringify makes of the objects the schemas check.
 */
describe('candle JSON written once', () => {
  // Doubles of every kind JSON can meet (tiny, huge, negative zero, non-finite as null).
  const price = fc.oneof(fc.double(), fc.constant(null), fc.integer());
  const head = fc.record({
    pool_id: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
    chain_type: fc.string(),
    chain_id: fc.integer({ min: 1, max: 2 ** 40 }),
    pool_address: fc.string({ unit: 'binary' }),
    token: fc.constantFrom('base' as const, 'quote' as const),
    updated_at: fc.integer({ min: 0, max: 2 ** 50 }),
  });
  const candle: fc.Arbitrary<CandleValues> = fc.record({
    interval: fc.constantFrom(...INTERVALS),
    open_time: fc.integer({ min: 0, max: 2 ** 40 }),
    open: price,
    high: price,
    low: price,
    close: price,
    volume: price,
  });
  const options = { seed: 20261127, numRuns: 400 };

  it('each stored candle is JSON.stringify of the candle with its pool', () => {
    fc.assert(
      fc.property(head, fc.array(candle, { maxLength: 12 }), (h, candles) => {
        const pool = candlesHead(h.pool_id, h, h.updated_at);
        const json = encodePoolCandles(pool, candles);
        candles.forEach((c, i) => expect(poolCandleJson(json.head, json.candles[i])).to.equal(JSON.stringify(poolCandle(pool, c))));
      }),
      options,
    );
  });

  it('a record is JSON.stringify of the kline.candles.v2 message, whole or any slice', () => {
    fc.assert(
      fc.property(head, fc.array(candle, { maxLength: 12 }), fc.nat(12), fc.nat(14), (h, candles, from, length) => {
        const pool = candlesHead(h.pool_id, h, h.updated_at);
        const json = encodePoolCandles(pool, candles);
        expect(candlesMessageJson(json)).to.equal(JSON.stringify(candlesMessage(pool, candles)));
        expect(candlesMessageJson(json, from, from + length)).to.equal(JSON.stringify(candlesMessage(pool, candles.slice(from, from + length))));
      }),
      options,
    );
  });

  it('writes a candle given with its fields in another order in the schema order', () => {
    const c = { volume: 3, close: 2, low: 1, high: 4, open: 2, open_time: 60, interval: '1m' } as CandleValues;
    const json = encodePoolCandles(candlesHead(1, { chain_type: 'evm', chain_id: 1, pool_address: '0xa', token: 'base' }, 5), [c]);
    expect(json.candles[0]).to.equal('{"interval":"1m","open_time":60,"open":2,"high":4,"low":1,"close":2,"volume":3}');
  });
});
