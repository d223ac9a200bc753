import { expect } from 'chai';
import { targetChanged, type StoredTarget } from '../src/queue-state';

/** Sealed secrets as SecretBox makes them: a fresh text on each seal of the same secret. */
let seals = 0;
const seal = (plain: string) => `sealed:${seals++}:${plain}`;
const open = (sealed: string) => sealed.split(':').slice(2).join(':');

const target = (over: Partial<StoredTarget> = {}): StoredTarget => ({ enable_webhook: true, is_active: true, webhook_url: 'https://hooks.example.com/a', webhook_secret_enc: seal('s1'), ...over });

describe('webhook queue state: what a configuration write changed', () => {
  it('the same target written again (the secret sealed anew) changes nothing', () => {
    expect(targetChanged(target(), target(), open)).to.equal(false);
    expect(targetChanged(target({ webhook_secret_enc: null }), target({ webhook_secret_enc: null }), open)).to.equal(false);
  });

  it('switched on or off, (de)activated, another URL or another secret is a change', () => {
    for (const over of [{ enable_webhook: false }, { is_active: false }, { webhook_url: 'https://hooks.example.com/b' }, { webhook_secret_enc: seal('s2') }, { webhook_secret_enc: null }]) {
      expect(targetChanged(target(), target(over), open), JSON.stringify(over)).to.equal(true);
    }
  });

  it('a configuration created or deleted is a change', () => {
    expect(targetChanged(undefined, target(), open)).to.equal(true);
    expect(targetChanged(target(), undefined, open)).to.equal(true);
    expect(targetChanged(undefined, undefined, open)).to.equal(false);
  });
});
