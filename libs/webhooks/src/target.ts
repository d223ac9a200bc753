import { BlockList, isIP } from 'node:net';

/**
 * Webhook targets are URLs our servers will POST to: a client choosing one must not be able to
 * make us call into our own network (cloud metadata at 169.254.169.254, loopback admin ports,
 * private services). This is the check at configuration time, on the URL as written; whoever
 * delivers must check again on the addresses a name resolves to (DNS can point anywhere later),
 * with `isBlockedAddress`.
 */

export const MAX_WEBHOOK_URL_LENGTH = 2048;

export interface WebhookTargetOptions {
  /**
   * Development and tests only: accept plain http and loopback/private/link-local targets (a
   * local receiver). Production leaves it false: https to a public host only.
   */
  allowPrivate?: boolean;
}

export type WebhookTargetCheck = { ok: true; url: string } | { ok: false; reason: string };

const BLOCKED = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) BLOCKED.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 96], // unspecified, loopback, IPv4-compatible
  ['64:ff9b::', 96], // NAT64: embeds an IPv4 address
  ['64:ff9b:1::', 48],
  ['100::', 64], // discard
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4: embeds an IPv4 address
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
] as const) BLOCKED.addSubnet(net, prefix, 'ipv6');

/** True for an IP literal we never call (loopback, private, link-local, …; IPv4-mapped IPv6 too). */
export function isBlockedAddress(ip: string): boolean {
  const family = isIP(ip);
  if (family === 4) return BLOCKED.check(ip, 'ipv4');
  if (family === 6) {
    // BlockList matches IPv4-mapped IPv6 (::ffff:a.b.c.d) against the IPv4 rules.
    return BLOCKED.check(ip, 'ipv6');
  }
  return false;
}

/** Names that only ever resolve inside a network (RFC 6761, 6762, 8375, common cloud suffixes). */
const INTERNAL_SUFFIXES = ['localhost', 'local', 'internal', 'intranet', 'lan', 'home.arpa', 'localdomain'];

function isInternalName(host: string): boolean {
  if (!host.includes('.')) return true; // single-label names resolve through search domains
  return INTERNAL_SUFFIXES.some((s) => host === s || host.endsWith(`.${s}`));
}

export function checkWebhookUrl(raw: string, opts: WebhookTargetOptions = {}): WebhookTargetCheck {
  const allowPrivate = opts.allowPrivate ?? false;
  const bad = (reason: string): WebhookTargetCheck => ({ ok: false, reason });
  if (raw.length > MAX_WEBHOOK_URL_LENGTH) return bad(`must be at most ${MAX_WEBHOOK_URL_LENGTH} characters`);
  // The URL parser silently drops tabs and newlines and trims blanks: what we store and later
  // call must be exactly what we checked.
  if ([...raw].some((c) => /\s/.test(c) || c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f)) return bad('must not contain whitespace or control characters');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return bad('must be an absolute URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return bad('must use https');
  if (url.protocol === 'http:' && !allowPrivate) return bad('must use https (the Sign secret travels in a header)');
  if (url.username || url.password) return bad('must not contain credentials');
  const host = url.hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '').toLowerCase();
  if (!host) return bad('must name a host');
  if (allowPrivate) return { ok: true, url: raw };
  if (isIP(host)) {
    if (isBlockedAddress(host)) return bad('must not point to a loopback, private, link-local or reserved address');
  } else if (isInternalName(host)) {
    return bad('must name a public host');
  }
  return { ok: true, url: raw };
}
