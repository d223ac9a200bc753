import { expect } from 'chai';
import { SecretBox, backoffMs } from '@chainpipe/runtime';

describe('SecretBox', () => {
  const box = new SecretBox('11'.repeat(32));

  it('round-trips, never stores the plain text and uses a fresh nonce each time', () => {
    const a = box.seal('s3cret value');
    const b = box.seal('s3cret value');
    expect(a).to.not.equal(b);
    expect(a).to.not.contain('s3cret');
    expect(box.open(a)).to.equal('s3cret value');
    expect(box.open(b)).to.equal('s3cret value');
  });

  it('refuses tampered text and other keys', () => {
    const sealed = box.seal('x');
    const parts = sealed.split('.');
    // Flip a bit of the cipher text: setting it to a fixed byte would, once in 256 seals, be
    // the byte it already was.
    const cipher = Buffer.from(parts[3], 'base64url');
    cipher[0] ^= 0x01;
    parts[3] = cipher.toString('base64url');
    expect(() => box.open(parts.join('.'))).to.throw();
    expect(() => new SecretBox('22'.repeat(32)).open(sealed)).to.throw();
    expect(() => box.open('garbage')).to.throw(/not a sealed secret/);
    expect(() => new SecretBox('short')).to.throw(/64 hex/);
  });
});

describe('backoffMs', () => {
  it('grows exponentially within [ceiling/2, ceiling] and caps', () => {
    expect(backoffMs(0, 100, 10_000, () => 0)).to.equal(50);
    expect(backoffMs(0, 100, 10_000, () => 1)).to.equal(100);
    expect(backoffMs(3, 100, 10_000, () => 1)).to.equal(800);
    expect(backoffMs(20, 100, 10_000, () => 1)).to.equal(10_000);
  });
});
