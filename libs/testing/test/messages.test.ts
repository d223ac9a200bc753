import { expect } from 'chai';
import { TOPICS } from '@chainpipe/contracts';
import { topicMessage } from '../src/messages';

describe('topicMessage (schema-checked test messages)', () => {
  const change = { app_id: 'app', chain_type: 'ethereum', adds: ['0x' + 'a'.repeat(40)], removes: [], changed_at: 1 };

  it('returns a message that satisfies its topic schema unchanged', () => {
    expect(topicMessage(TOPICS.addressesChanges, change)).to.equal(change);
  });

  it('throws, naming the topic, for a message its producer would refuse', () => {
    const missing = { ...change } as Partial<typeof change>;
    delete missing.app_id;
    expect(() => topicMessage(TOPICS.addressesChanges, missing as typeof change)).to.throw(/addresses\.changes\.v1/);
    expect(() => topicMessage(TOPICS.addressesChanges, { ...change, changed_at: 'yesterday' as unknown as number })).to.throw(/schema/);
  });

  it('refuses a raw topic, whose value is bytes', () => {
    expect(() => topicMessage(TOPICS.chainRaw, Buffer.from('x'))).to.throw(/not a json topic/);
  });
});
