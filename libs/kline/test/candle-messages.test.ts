import { expect } from 'chai';
import { seededRandom } from '@chainpipe/testing';
import { candleJsonTail, candlesHead, candlesHeadJson, candlesMessage, candlesMessageJson, poolCandle, type CandleValues } from '../src';

describe('candle JSON written once for Redis and the record', () => {
  const rnd = seededRandom(77);
  const price = (): number | null => {
    const r = rnd();
    if (r < 0.1) return null;
    if (r < 0.2) return Math.round(rnd() * 1e6);
    if (r < 0.3) return rnd() * 1e-12;
    if (r < 0.4) return 1e21 * rnd();
    if (r < 0.45) return -0;
    return rnd() * 1000;
  };
  const candle = (i: number): CandleValues => ({ interval: (['1s', '1m', '1w', '1Y'] as const)[i % 4], open_time: 1_795_000_000 + i * 60, open: price(), high: price(), low: price(), close: price(), volume: price() });
  // Pool fields a JSON writer must escape: quotes, a backslash, a newline, non-ASCII, a field name.
  const heads = [
    candlesHead(12, { chain_type: 'evm', chain_id: 1, pool_address: '0xabc', token: 'base' }, 1_795_000_123_456),
    candlesHead(2 ** 31 - 1, { chain_type: 'sv"m\\\n', chain_id: 0, pool_address: 'é😀","candles":[', token: 'quote' }, 0),
  ];

  it('gives the same text as JSON.stringify of the record and of each candle with its pool', () => {
    for (const head of heads) {
      for (const n of [0, 1, 9, 40]) {
        const candles = Array.from({ length: n }, (_, i) => candle(i));
        const tails = candles.map(candleJsonTail);
        const headJson = candlesHeadJson(head);
        expect(candlesMessageJson(headJson, tails), `${n} candles`).to.equal(JSON.stringify(candlesMessage(head, candles)));
        candles.forEach((c, i) => expect(headJson + tails[i]).to.equal(JSON.stringify(poolCandle(head, c))));
      }
    }
  });
});
