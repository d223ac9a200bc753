import { expect } from 'chai';
import { Registry } from 'prom-client';
import type { MarketTickMessage } from '@chainpipe/contracts';
import type { ConsumedRecord } from '@chainpipe/kafka';
import type { PoolUpdate } from '@chainpipe/kline';
import { createTicksHandler, RETENTION_MARGIN_SECONDS, secondsCutOff } from '../src/ticks.handler';

const DAY = 86_400;
const NOW = 1_800_000_000;

describe('kline-aggregator: 1s ticks past the retention', () => {
  it('the cut-off is the retention, a margin inside it', () => {
    expect(secondsCutOff(NOW * 1000 + 999, DAY)).to.equal(NOW - DAY + RETENTION_MARGIN_SECONDS);
  });

  it('refuses 1s ticks of a second before the cut-off and counts them; longer intervals and the rest of the call are stored', async () => {
    const stored: PoolUpdate[][] = [];
    const registry = new Registry();
    const handler = createTicksHandler({
      candles: {
        applyUpdates: async (updates) => {
          stored.push([...updates]);
          return new Map();
        },
      },
      pools: { unregistered: async () => new Set() },
      latest: { putMany: async () => {} },
      publish: async () => {},
      registry,
      clock: { now: () => NOW * 1000 },
      secondsRetention: DAY,
    });
    const cutOff = secondsCutOff(NOW * 1000, DAY);
    const tick = (interval: MarketTickMessage['interval'], openTime: number): ConsumedRecord<MarketTickMessage> => ({
      topic: 't', partition: 0, offset: '0', key: null, headers: {}, timestamp: '0',
      value: { pool_id: 1, chain_type: 'evm', chain_id: 1, pool_address: '0xabc', token: 'base', network_id: 'eth', interval, open_time: openTime, open: 1, high: 1, low: 1, close: 1, volume: 1, received_at: NOW * 1000, seq: 0 },
    });
    const signal = new AbortController().signal;
    await handler([tick('1s', cutOff - 1), tick('1s', cutOff), tick('1m', cutOff - 3600 * 24 * 2)], { heartbeat: async () => {}, signal });
    expect(stored.flat().map((u) => [u.interval, u.open_time])).to.deep.equal([
      ['1s', cutOff],
      ['1m', cutOff - 3600 * 24 * 2],
    ]);
    // One store a call's interval, shortest first (seconds, then the minute).
    expect(stored.map((round) => round.map((u) => u.interval))).to.deep.equal([['1s'], ['1m']]);
    await handler([tick('1s', cutOff - DAY)], { heartbeat: async () => {}, signal });
    expect(stored, 'a call of refused ticks only stores nothing').to.have.length(2);
    const counted = (await registry.getSingleMetric('chainpipe_kline_ticks_past_retention_total')!.get()).values[0].value;
    expect(counted).to.equal(2);
  });
});
