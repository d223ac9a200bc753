import { createHmac } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { expect } from 'chai';
import { verifyQuickNodeDelivery } from '../src/webhook-signature';

describe('QuickNode Streams webhook signature', () => {
  const token = 'qnsec_7fQ2c1Zx9LwA4mK8pR3tV6yB0nD5hJ';
  const body = Buffer.from(JSON.stringify({ data: [{ number: '0x1', hash: '0xab' }], metadata: { dataset: 'block', network: 'ethereum-mainnet' } }));
  const nowMs = 1_765_000_000_000;
  const timestamp = String(nowMs / 1000);
  const nonce = 'b6a9c2e4-5d1f-4f7e-9a3b-2c8d7e6f5a4b';
  // As QuickNode documents it: HMAC-SHA256 keyed with the security token over nonce + timestamp + payload, hex.
  const sign = (payload: Buffer | string, key = token, n = nonce, t = timestamp) => createHmac('sha256', key).update(n + t + payload.toString()).digest('hex');
  const verifier = { securityToken: token, maxAgeSeconds: 300 };
  const headers = (signature: string, extra: Record<string, string> = {}) => ({ 'x-qn-nonce': nonce, 'x-qn-timestamp': timestamp, 'x-qn-signature': signature, ...extra });

  it('accepts a delivery signed with the stream\'s token, in either hex case', () => {
    expect(verifyQuickNodeDelivery(verifier, headers(sign(body)), body, nowMs)).to.deep.equal({ ok: true });
    expect(verifyQuickNodeDelivery(verifier, headers(sign(body).toUpperCase()), body, nowMs)).to.deep.equal({ ok: true });
  });

  it('a gzip delivery is signed over the JSON before compression: the check runs on the inflated body', () => {
    const signature = sign(body);
    expect(verifyQuickNodeDelivery(verifier, headers(signature, { 'content-encoding': 'gzip' }), body, nowMs)).to.deep.equal({ ok: true });
    expect(verifyQuickNodeDelivery(verifier, headers(signature), gzipSync(body), nowMs)).to.deep.equal({ ok: false, reason: 'invalid' });
  });

  it('refuses unsigned deliveries, another token, a changed body, nonce or timestamp, and malformed signatures', () => {
    expect(verifyQuickNodeDelivery(verifier, {}, body, nowMs)).to.deep.equal({ ok: false, reason: 'unsigned' });
    expect(verifyQuickNodeDelivery(verifier, { 'x-qn-nonce': nonce, 'x-qn-timestamp': timestamp }, body, nowMs)).to.deep.equal({ ok: false, reason: 'unsigned' });
    const invalid = { ok: false, reason: 'invalid' };
    expect(verifyQuickNodeDelivery(verifier, headers(sign(body, 'another-token')), body, nowMs)).to.deep.equal(invalid);
    expect(verifyQuickNodeDelivery(verifier, headers(sign(body)), Buffer.concat([body, Buffer.from(' ')]), nowMs)).to.deep.equal(invalid);
    expect(verifyQuickNodeDelivery(verifier, headers(sign(body, token, 'other-nonce')), body, nowMs)).to.deep.equal(invalid);
    expect(verifyQuickNodeDelivery(verifier, headers(sign(body, token, nonce, String(Number(timestamp) - 1))), body, nowMs)).to.deep.equal(invalid);
    for (const bad of ['xyz', sign(body).slice(0, 63), Buffer.from(sign(body), 'hex').toString('base64')]) expect(verifyQuickNodeDelivery(verifier, headers(bad), body, nowMs), bad).to.deep.equal(invalid);
  });

  it('refuses a signed delivery whose timestamp is further from now than the window (a replay), unless the window is 0', () => {
    const later = nowMs + 301_000;
    expect(verifyQuickNodeDelivery(verifier, headers(sign(body)), body, later)).to.deep.equal({ ok: false, reason: 'stale' });
    expect(verifyQuickNodeDelivery(verifier, headers(sign(body)), body, nowMs + 299_000)).to.deep.equal({ ok: true });
    expect(verifyQuickNodeDelivery({ ...verifier, maxAgeSeconds: 0 }, headers(sign(body)), body, later)).to.deep.equal({ ok: true });
  });
});
