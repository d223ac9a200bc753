import { expect } from 'chai';
import { BlockList } from 'node:net';
import { clientAddress, clientAddressKey, parseRateLimit, rateLimitField, trustedProxiesField } from '../src/rate-limit';

describe('rate limits: configuration and client addresses', () => {
  it('reads <requests>/<window> in seconds, minutes and hours, and off', () => {
    expect(parseRateLimit('600/1m')).to.deep.equal({ points: 600, seconds: 60 });
    expect(parseRateLimit('20/10s')).to.deep.equal({ points: 20, seconds: 10 });
    expect(parseRateLimit('5000/h')).to.deep.equal({ points: 5000, seconds: 3600 });
    expect(parseRateLimit(' 3 / 2M ')).to.deep.equal({ points: 3, seconds: 120 });
    expect(parseRateLimit('off')).to.equal(undefined);
  });

  it('refuses what is no limit', () => {
    for (const text of ['', '600', '600/1d', '0/1m', '-5/1m', '1.5/1m', '10/0s', '10/25h', 'ten/1m']) {
      expect(parseRateLimit(text), text).to.have.property('error');
    }
  });

  it('a field takes its default when unset, keeps the text as written, and names a bad value', () => {
    const field = rateLimitField({ default: '30/1m', doc: 'ensure calls' });
    expect(field.parse(undefined)).to.deep.equal({ value: '30/1m' });
    expect(field.parse('off')).to.deep.equal({ value: 'off' });
    expect(field.parse('2/10s')).to.deep.equal({ value: '2/10s' });
    expect(field.parse('lots')).to.have.property('error').that.includes('"lots"');
    expect(() => rateLimitField({ default: 'lots', doc: '' })).to.throw(/rate limit default/);
  });

  it('counts IPv4 clients by address and IPv6 clients by their /64', () => {
    expect(clientAddressKey('203.0.113.7')).to.equal('203.0.113.7');
    expect(clientAddressKey('::ffff:203.0.113.7')).to.equal('203.0.113.7');
    expect(clientAddressKey('2001:db8:0:12:aa::1')).to.equal('2001:db8:0:12::/64');
    expect(clientAddressKey('2001:db8:0:12:ffff:1:2:3')).to.equal('2001:db8:0:12::/64');
    expect(clientAddressKey('2001:0db8::1')).to.equal('2001:db8:0:0::/64');
    expect(clientAddressKey('::1')).to.equal('0:0:0:0::/64');
    expect(clientAddressKey('fe80::1%eth0')).to.equal('fe80:0:0:0::/64');
    expect(clientAddressKey(undefined)).to.equal('unknown');
  });

  it('trusted proxies: addresses and CIDR ranges, validated; empty trusts none', () => {
    const field = trustedProxiesField();
    expect(field.parse(undefined)).to.deep.equal({ value: '' });
    expect(field.parse('10.0.0.0/8, 192.0.2.7,2001:db8::/32')).to.deep.equal({ value: '10.0.0.0/8, 192.0.2.7,2001:db8::/32' });
    for (const bad of ['10.0.0.0/33', 'proxy.local', '10.0.0.0/8/1', '2001:db8::/129']) expect(field.parse(bad), bad).to.have.property('error');
  });

  it('reads X-Forwarded-For only from a trusted proxy, and only up to the first address it does not trust', () => {
    const trusted = new BlockList();
    trusted.addSubnet('10.0.0.0', 8, 'ipv4');
    const req = (peer: string, forwarded?: string) => ({ socket: { remoteAddress: peer }, headers: forwarded === undefined ? {} : { 'x-forwarded-for': forwarded } }) as never;
    // no proxy trusted: the peer, whatever the header says
    expect(clientAddress(req('203.0.113.9', '198.51.100.1'), undefined)).to.equal('203.0.113.9');
    // a peer that is no proxy cannot choose its address
    expect(clientAddress(req('203.0.113.9', '198.51.100.1'), trusted)).to.equal('203.0.113.9');
    // through two trusted proxies to the client; what the client wrote before it is not read
    expect(clientAddress(req('10.1.1.1', 'forged, 198.51.100.1, 10.2.2.2'), trusted)).to.equal('198.51.100.1');
    expect(clientAddress(req('::ffff:10.1.1.1', '198.51.100.1'), trusted)).to.equal('198.51.100.1');
    // a trusted proxy that names nobody: the proxy itself
    expect(clientAddress(req('10.1.1.1'), trusted)).to.equal('10.1.1.1');
  });
});
