import { generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { isIP } from 'node:net';

/**
 * A certificate authority made at test time, and server certificates it signs, with node's own
 * crypto (ECDSA P-256, SHA-256): the https receivers of the delivery tests are trusted the way a
 * deployment trusts a private CA (its PEM in the dispatcher's configuration), not by switching
 * verification off. Certificates are written in DER by hand: X.509 needs only a few ASN.1 types.
 */

/** One DER element: tag, length, content. */
function der(tag: number, content: Buffer): Buffer {
  const n = content.length;
  const len = n < 0x80 ? Buffer.from([n]) : n < 0x100 ? Buffer.from([0x81, n]) : Buffer.from([0x82, n >> 8, n & 0xff]);
  return Buffer.concat([Buffer.from([tag]), len, content]);
}
const seq = (...items: Buffer[]) => der(0x30, Buffer.concat(items));
const set = (...items: Buffer[]) => der(0x31, Buffer.concat(items));
const octets = (b: Buffer) => der(0x04, b);
const bits = (b: Buffer) => der(0x03, Buffer.concat([Buffer.from([0]), b]));
const bool = (v: boolean) => der(0x01, Buffer.from([v ? 0xff : 0]));
const utf8 = (s: string) => der(0x0c, Buffer.from(s, 'utf8'));
/** A positive INTEGER from big-endian bytes (a leading zero keeps it positive). */
const uint = (b: Buffer) => der(0x02, b[0] & 0x80 ? Buffer.concat([Buffer.from([0]), b]) : b);

function oid(dotted: string): Buffer {
  const [a, b, ...rest] = dotted.split('.').map(Number);
  const out = [40 * a + b];
  for (const n of rest) {
    const groups = [n & 0x7f];
    for (let v = n >>> 7; v > 0; v >>>= 7) groups.unshift((v & 0x7f) | 0x80);
    out.push(...groups);
  }
  return der(0x06, Buffer.from(out));
}

/** UTCTime (YYMMDDHHMMSSZ): valid through 2049, enough for a test's certificates. */
function time(d: Date): Buffer {
  const p = (n: number) => String(n).padStart(2, '0');
  return der(0x17, Buffer.from(`${p(d.getUTCFullYear() % 100)}${p(d.getUTCMonth() + 1)}${p(d.getUTCDate())}${p(d.getUTCHours())}${p(d.getUTCMinutes())}${p(d.getUTCSeconds())}Z`));
}

const ECDSA_SHA256 = seq(oid('1.2.840.10045.4.3.2'));
const name = (cn: string) => seq(set(seq(oid('2.5.4.3'), utf8(cn))));
const extension = (id: string, critical: boolean, value: Buffer) => seq(oid(id), ...(critical ? [bool(true)] : []), octets(value));

/** The subjectAltName of `hosts`: DNS names and IP addresses (v4 or v6). */
function altNames(hosts: readonly string[]): Buffer {
  return seq(
    ...hosts.map((h) => {
      const family = isIP(h);
      if (family === 4) return der(0x87, Buffer.from(h.split('.').map(Number)));
      if (family === 6) return der(0x87, ipv6Bytes(h));
      return der(0x82, Buffer.from(h, 'ascii'));
    }),
  );
}

function ipv6Bytes(ip: string): Buffer {
  const [head, tail = ''] = ip.split('::');
  const parts = (s: string) => (s ? s.split(':') : []);
  const h = parts(head);
  const t = ip.includes('::') ? parts(tail) : [];
  const words = [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t];
  return Buffer.from(words.flatMap((w) => [parseInt(w, 16) >> 8, parseInt(w, 16) & 0xff]));
}

function certificate(opts: { subject: string; issuer: string; publicKey: KeyObject; signer: KeyObject; extensions: Buffer[] }): string {
  const now = Date.now();
  const tbs = seq(
    der(0xa0, uint(Buffer.from([2]))), // v3
    uint(randomBytes(16)),
    ECDSA_SHA256,
    name(opts.issuer),
    seq(time(new Date(now - 3600_000)), time(new Date(now + 7 * 24 * 3600_000))),
    name(opts.subject),
    opts.publicKey.export({ type: 'spki', format: 'der' }),
    der(0xa3, seq(...opts.extensions)),
  );
  const signature = sign('sha256', tbs, opts.signer);
  const body = seq(tbs, ECDSA_SHA256, bits(signature)).toString('base64');
  return `-----BEGIN CERTIFICATE-----\n${body.match(/.{1,64}/g)!.join('\n')}\n-----END CERTIFICATE-----\n`;
}

export interface ServerCertificate {
  /** PEM of the server's certificate. */
  cert: string;
  /** PEM (PKCS#8) of its private key. */
  key: string;
}

export class TestCertificateAuthority {
  /** PEM of the CA's own certificate: what a client is told to trust. */
  readonly cert: string;
  private readonly key: KeyObject;

  constructor(readonly commonName = `chainpipe test CA ${randomBytes(4).toString('hex')}`) {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    this.key = privateKey;
    this.cert = certificate({
      subject: commonName,
      issuer: commonName,
      publicKey,
      signer: privateKey,
      extensions: [
        extension('2.5.29.19', true, seq(bool(true))), // basicConstraints: CA
        extension('2.5.29.15', true, bits(Buffer.from([0x06]))), // keyUsage: keyCertSign, cRLSign
      ],
    });
  }

  /** A server certificate for `hosts` (DNS names and IP addresses), signed by this CA. */
  issue(hosts: readonly string[]): ServerCertificate {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    const cert = certificate({
      subject: hosts[0],
      issuer: this.commonName,
      publicKey,
      signer: this.key,
      extensions: [
        extension('2.5.29.19', true, seq()), // basicConstraints: not a CA
        extension('2.5.29.15', true, bits(Buffer.from([0x80]))), // keyUsage: digitalSignature
        extension('2.5.29.37', false, seq(oid('1.3.6.1.5.5.7.3.1'))), // extKeyUsage: serverAuth
        extension('2.5.29.17', false, altNames(hosts)),
      ],
    });
    return { cert, key: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string };
  }
}
