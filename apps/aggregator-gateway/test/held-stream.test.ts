import { expect } from 'chai';
import { ManualClock } from '@chainpipe/testing';
import { HeldStream } from '../src/quotes/held-stream';

/** A response that records what was sent, and when. */
function recordingSink(clock: ManualClock) {
  const sent: Array<[number, string]> = [];
  let writable = true;
  return {
    sent,
    end: () => (writable = false),
    sink: {
      // Flushed only when no held event follows to carry the response head.
      open: (flush: boolean) => void sent.push([clock.now(), flush ? 'open, head flushed' : 'open']),
      write: (chunk: string) => void sent.push([clock.now(), chunk]),
      writable: () => writable,
    },
  };
}

describe('HeldStream (the quote stream start rule) on a manual clock', () => {
  it('holds events until the first quote begins the stream, then heartbeats every heartbeatMs', async () => {
    const clock = new ManualClock();
    const out = recordingSink(clock);
    const stream = new HeldStream(out.sink, 1_000, clock);
    await clock.advance(300);
    stream.write('error a');
    expect(out.sent, 'nothing sent while held').to.deep.equal([]);
    stream.begin(); // the first channel quote
    stream.write('channel b');
    await clock.advance(2_000);
    expect(out.sent).to.deep.equal([
      [300, 'open'],
      [300, 'error a'],
      [300, 'channel b'],
      [1_300, ': heartbeat\n\n'],
      [2_300, ': heartbeat\n\n'],
    ]);
    stream.close();
    await clock.advance(10_000);
    expect(out.sent, 'no heartbeat after close').to.have.length(5);
    expect(clock.pendingTimers).to.equal(0);
  });

  it('begins by itself after heartbeatMs without a quote, not a millisecond earlier', async () => {
    const clock = new ManualClock();
    const out = recordingSink(clock);
    const stream = new HeldStream(out.sink, 1_000, clock);
    stream.write('error a');
    await clock.advance(999);
    expect(stream.started).to.equal(false);
    await clock.advance(1);
    expect(stream.started).to.equal(true);
    expect(out.sent).to.deep.equal([
      [1_000, 'open'],
      [1_000, 'error a'],
    ]);
    stream.close();
  });

  it('closed before it began (every channel failed: an error envelope instead) it never opens', async () => {
    const clock = new ManualClock();
    const out = recordingSink(clock);
    const stream = new HeldStream(out.sink, 1_000, clock);
    stream.write('error a');
    stream.close();
    await clock.advance(5_000);
    expect(stream.started).to.equal(false);
    expect(out.sent).to.deep.equal([]);
  });

  it('sends nothing once the response is no longer writable (the client left)', async () => {
    const clock = new ManualClock();
    const out = recordingSink(clock);
    const stream = new HeldStream(out.sink, 1_000, clock);
    stream.begin();
    out.end();
    stream.write('channel b');
    await clock.advance(3_000);
    expect(out.sent).to.deep.equal([[0, 'open, head flushed']]);
    stream.close();
  });
});
