import { expect } from 'chai';
import { fanoutGap, parseFanoutEntry } from '../src/push/fanout';

describe('fan-out stream gaps', () => {
  it('finds none while the numbers follow each other, or before the first numbered entry', () => {
    expect(fanoutGap(7, 8)).to.equal(undefined);
    expect(fanoutGap(undefined, 8)).to.equal(undefined);
    expect(fanoutGap(7, undefined)).to.equal(undefined);
  });

  it('counts the numbers passed over when the stream was trimmed past the reader', () => {
    expect(fanoutGap(7, 9)).to.deep.equal({ kind: 'skipped', missed: 1 });
    expect(fanoutGap(100, 10_101)).to.deep.equal({ kind: 'skipped', missed: 10_000 });
  });

  it('calls a numbering that started again a reset (Redis lost the stream and its counter)', () => {
    expect(fanoutGap(7, 1)).to.deep.equal({ kind: 'reset' });
    expect(fanoutGap(7, 7)).to.deep.equal({ kind: 'reset' });
  });

  it('reads the entry number next to the push, and an entry without one as before', () => {
    const fields = ['app', 'a1', 'id', 'm1', 'chain', 'ethereum', 'addrs', '["0xab"]', 'frame', '{}'];
    expect(parseFanoutEntry(['seq', '42', ...fields])).to.deep.equal({ seq: 42, appId: 'a1', messageId: 'm1', chainType: 'ethereum', listenAddress: ['0xab'], frame: '{}' });
    expect(parseFanoutEntry(fields)).to.deep.equal({ appId: 'a1', messageId: 'm1', chainType: 'ethereum', listenAddress: ['0xab'], frame: '{}' });
    expect(parseFanoutEntry(['seq', 'x', ...fields])?.seq).to.equal(undefined);
  });
});
