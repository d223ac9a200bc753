import { expect } from 'chai';
import { Registry } from 'prom-client';
import type { MarketTickMessage } from '@chainpipe/contracts';
import type { OutgoingMessage } from '@chainpipe/kafka';
import type { PoolRecord, UpstreamOhlcv } from '@chainpipe/kline';
import { createLogger } from '@chainpipe/runtime';
import { ManualClock } from '@chainpipe/testing';
import { MarketIngester } from '../src/ingester';
import { PendingTicks } from '../src/pending-ticks';
import type { UpstreamSocket } from '../src/upstream-socket';

const logger = createLogger({ name: 'test', level: 'silent' });
/** Lets the promise callbacks queued so far run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

/** A broker stand-in: refuses while `down`, records what it took in order. */
function broker() {
  const taken: number[] = [];
  const state = { down: false, calls: 0 };
  const publish = async (messages: OutgoingMessage<number>[]) => {
    state.calls++;
    if (state.down) throw new Error('broker away');
    taken.push(...messages.map((m) => m.value));
  };
  return { taken, state, publish };
}

describe('PendingTicks: updates wait for the broker, in order, up to a bound', () => {
  it('publishes in the order pushed, tries a failed batch again after its backoff, and loses nothing below the bound', async () => {
    const clock = new ManualClock();
    const b = broker();
    const dropped: number[] = [];
    const pending = new PendingTicks<number>({
      publish: b.publish, maxPending: 100, maxBatch: 4, retry: { initialMs: 100, maxMs: 400 }, clock, random: () => 1,
      onPublished: () => undefined, onFailed: () => undefined, onDropped: (m) => dropped.push(m.value),
    });
    b.state.down = true;
    for (let i = 0; i < 10; i++) pending.push({ value: i });
    await settle();
    expect(b.taken).to.deep.equal([]);
    expect(pending.size).to.equal(10);
    // Failures in a row back off 100, 200, 400, 400 ms.
    for (const wait of [100, 200, 400, 400]) {
      expect(clock.nextDueIn()).to.equal(wait);
      await clock.advance(wait);
      await settle();
    }
    b.state.down = false;
    for (let i = 10; i < 13; i++) pending.push({ value: i });
    await clock.advance(400);
    for (let i = 0; i < 5; i++) await settle();
    expect(b.taken, 'every update, in order').to.deep.equal(Array.from({ length: 13 }, (_, i) => i));
    expect(pending.size).to.equal(0);
    expect(dropped).to.deep.equal([]);
  });

  it('drops what comes past the bound and says it is full until the backlog goes below it', async () => {
    const clock = new ManualClock();
    const b = broker();
    const dropped: number[] = [];
    const pending = new PendingTicks<number>({
      publish: b.publish, maxPending: 3, maxBatch: 10, retry: { initialMs: 100, maxMs: 100 }, clock, random: () => 1,
      onPublished: () => undefined, onFailed: () => undefined, onDropped: (m) => dropped.push(m.value),
    });
    b.state.down = true;
    expect([1, 2, 3, 4, 5].map((v) => pending.push({ value: v }))).to.deep.equal([true, true, true, false, false]);
    expect(pending.full).to.equal(true);
    expect(dropped).to.deep.equal([4, 5]);
    b.state.down = false;
    await clock.advance(100);
    for (let i = 0; i < 5; i++) await settle();
    expect(b.taken).to.deep.equal([1, 2, 3]);
    expect(pending.full).to.equal(false);
  });
});

describe('MarketIngester: the broker away', () => {
  const pool = { id: 7, chain_type: 'evm', chain_id: 1, network_id: 'eth', pool_address: '0xabc', token: 'base' } as unknown as PoolRecord;
  const update = (t: number): UpstreamOhlcv => ({ ch: 'G3', n: 'eth', pa: '0xabc', to: 'base', i: '1s', o: 1, h: 2, l: 0.5, c: 1.5, v: t, t });

  it('keeps the updates while the broker refuses them, is unready at the bound, and publishes them in order once it is back', async () => {
    const clock = new ManualClock(1_800_000_000_000);
    const taken: MarketTickMessage[] = [];
    let down = true;
    let onUpdate!: (u: UpstreamOhlcv) => void;
    const registry = new Registry();
    const ingester = new MarketIngester({
      activePools: async () => [pool],
      publish: async (messages) => {
        if (down) throw new Error('broker away');
        taken.push(...messages.map((m) => m.value));
      },
      openSocket: (_i, cb) => {
        onUpdate = cb;
        return { setDesired: () => undefined, stop: async () => undefined, refused: () => [], open: true, confirmed: true } as unknown as UpstreamSocket;
      },
      interval: '1s', subscriptionsPerSocket: 100, logger, registry, clock,
      maxPendingTicks: 5, publishRetry: { initialMs: 1_000, maxMs: 1_000 },
      backfill: { fetchMinutes: async () => [], latestStoredMinutes: async () => new Map(), settleMs: 0 },
    });
    await ingester.sync();
    for (let t = 1_800_000_000; t < 1_800_000_005; t++) onUpdate(update(t));
    expect(ingester.backlogFull, 'the bound reached').to.equal(true);
    onUpdate(update(1_800_000_005));
    const outcome = async (o: string) => (await registry.getSingleMetric('chainpipe_market_ticks_total')!.get()).values.find((v) => v.labels.outcome === o)?.value ?? 0;
    expect(await outcome('dropped')).to.equal(1);
    down = false;
    await clock.advance(1_000);
    for (let i = 0; i < 5; i++) await settle();
    expect(taken.map((t) => t.open_time)).to.deep.equal([1_800_000_000, 1_800_000_001, 1_800_000_002, 1_800_000_003, 1_800_000_004]);
    expect(ingester.backlogFull).to.equal(false);
    expect(await outcome('published')).to.equal(5);
    await ingester.stop();
  });
});
