import { expect } from 'chai';
import { HandlerRetry, RetryBudgetExhausted, StoppedWhileRetrying, type ConsumedRecord, type RetryPolicy } from '@chainpipe/kafka';
import { NonRetryableError, createLogger } from '@chainpipe/runtime';
import { ManualClock } from '@chainpipe/testing';

const logger = createLogger({ name: 'test', level: 'silent' });
const record = (offset: string): ConsumedRecord<string> => ({ topic: 't', partition: 0, offset, key: null, value: offset, headers: {}, timestamp: '0' });
const heartbeat = async () => undefined;
/** Jitter at its top: each wait is the backoff ceiling itself. */
const ceilingRandom = () => 1;

function retrying(handler: (records: ConsumedRecord<string>[]) => Promise<void>, policy: RetryPolicy, controller = new AbortController()) {
  const clock = new ManualClock();
  const calls: number[] = [];
  let retries = 0;
  const retry = new HandlerRetry<string>({
    handler: async (records) => {
      calls.push(clock.now());
      await handler(records);
    },
    policy,
    signal: controller.signal,
    logger,
    onRetry: () => retries++,
    clock,
    random: ceilingRandom,
  });
  return { clock, calls, retry, retries: () => retries };
}

describe('HandlerRetry', () => {
  it('retries a failing handler after 200, 400, 800, 1000, 1000 ms (doubling to the cap), then gives up past the budget', async () => {
    const { clock, calls, retry, retries } = retrying(async () => {
      throw new Error('boom');
    }, { retries: 5, initialMs: 200, maxMs: 1_000 });
    const outcome = retry.run([record('1')], heartbeat).then(
      () => 'resolved',
      (err: unknown) => err,
    );
    await clock.advance(60_000);
    expect(await outcome).to.be.instanceOf(RetryBudgetExhausted);
    expect(calls).to.deep.equal([0, 200, 600, 1_400, 2_400, 3_400]);
    expect(retries()).to.equal(5);
  });

  it('returns once the handler succeeds, at the instant its backoff ends', async () => {
    let failuresLeft = 2;
    const { clock, calls, retry } = retrying(async () => {
      if (failuresLeft-- > 0) throw new Error('transient');
    }, { retries: 8, initialMs: 100, maxMs: 10_000 });
    let done = false;
    const result = retry.run([record('1')], heartbeat).then((dead) => ((done = true), dead));
    await clock.advance(299);
    expect(done).to.equal(false);
    await clock.advance(1);
    expect(await result).to.deep.equal([]);
    expect(calls).to.deep.equal([0, 100, 300]);
  });

  it('waits for an unreachable dependency past the retry budget, one try per maxMs once capped, and says what it waits for', async () => {
    let down = true;
    const { clock, calls, retry } = retrying(async () => {
      if (down) throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    }, { retries: 1, initialMs: 1_000, maxMs: 4_000 });
    const result = retry.run([record('1')], heartbeat);
    await clock.advance(20_000);
    expect(calls).to.deep.equal([0, 1_000, 3_000, 7_000, 11_000, 15_000, 19_000]);
    expect(retry.waitingFor).to.match(/ECONNREFUSED/);
    down = false;
    await clock.advance(4_000);
    expect(await result).to.deep.equal([]);
    expect(retry.waitingFor).to.equal(undefined);
  });

  it('keeps saying what it waits for while one of two side-by-side runs (two partitions) still waits after the other recovered', async () => {
    const down = new Set(['a', 'b']);
    const { clock, retry } = retrying(async (records) => {
      if (down.has(records[0].value)) throw Object.assign(new Error(`connect ECONNREFUSED for ${records[0].value}`), { code: 'ECONNREFUSED' });
    }, { retries: 1, initialMs: 1_000, maxMs: 1_000 });
    const a = retry.run([record('a')], heartbeat);
    const b = retry.run([record('b')], heartbeat);
    await clock.advance(1_500);
    expect(retry.waitingFor).to.match(/ECONNREFUSED/);
    down.delete('a');
    await clock.advance(1_000);
    expect(await a).to.deep.equal([]);
    expect(retry.waitingFor).to.equal('connect ECONNREFUSED for b');
    down.delete('b');
    await clock.advance(1_000);
    expect(await b).to.deep.equal([]);
    expect(retry.waitingFor).to.equal(undefined);
  });

  it('ends a backoff at once when stopped: StoppedWhileRetrying, no further handler call', async () => {
    const controller = new AbortController();
    const { clock, calls, retry } = retrying(async () => {
      throw new Error('boom');
    }, { retries: 8, initialMs: 60_000, maxMs: 600_000 }, controller);
    const outcome = retry.run([record('1')], heartbeat).catch((err: unknown) => err);
    await clock.advance(30_000);
    controller.abort();
    expect(await outcome).to.be.instanceOf(StoppedWhileRetrying);
    expect(calls).to.deep.equal([0]);
    expect(clock.now(), 'no time had to pass').to.equal(30_000);
    expect(clock.pendingTimers).to.equal(0);
  });

  it('isolates a non-retryable failure down to the one record that causes it', async () => {
    const { clock, retry } = retrying(async (records) => {
      if (records.some((r) => r.value === '2')) throw new NonRetryableError('bad record', 'HANDLER_REJECTED');
    }, { retries: 8, initialMs: 100, maxMs: 1_000 });
    const dead = await retry.run([record('1'), record('2'), record('3')], heartbeat);
    expect(dead.map((d) => [d.record.offset, d.code, d.reason])).to.deep.equal([['2', 'HANDLER_REJECTED', 'bad record']]);
    expect(clock.now(), 'no backoff for a non-retryable failure').to.equal(0);
  });
});
