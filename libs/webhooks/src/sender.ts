import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import tls from 'node:tls';
import type { LookupFunction } from 'node:net';
import { isBlockedAddress } from './target';

export type Lookup = (hostname: string) => Promise<Array<{ address: string; family: number }>>;

export interface SenderOptions {
  /** Development and tests only: plain http and loopback/private targets. */
  allowPrivate: boolean;
  connectTimeoutMs: number;
  /** From sending to the end of the response headers. */
  responseTimeoutMs: number;
  /** Response bytes read at most (the body is ignored; this only lets the connection be reused). */
  maxResponseBytes: number;
  /** Name resolution (tests inject one); default: the system resolver, every address. */
  lookup?: Lookup;
  /** PEM of certificate authorities trusted besides node's default ones (`WEBHOOK_CA_FILE`). */
  extraCa?: string;
}

/** How every webhook POST of a deployment is bounded unless its config says otherwise. */
export const SENDER_DEFAULTS = { connectTimeoutMs: 5_000, responseTimeoutMs: 10_000, maxResponseBytes: 64 * 1024 } as const;

export type SendResult = { ok: true; status: number } | { ok: false; status?: number; error: string };

/** `family` as net.connect passes it (4, 6, 'IPv4', 'IPv6', 0 or undefined for any). */
function familyOf(family: number | string | undefined): 4 | 6 | 0 {
  if (family === 4 || family === 'IPv4') return 4;
  if (family === 6 || family === 'IPv6') return 6;
  return 0;
}

const systemLookup: Lookup = (hostname) => dns.promises.lookup(hostname, { all: true, verbatim: true });

/** Parsed webhook URLs by their text: a deployment POSTs to the same few URLs again and again. */
const urls = new Map<string, URL | null>();

function parsedUrl(raw: string): URL | null {
  let url = urls.get(raw);
  if (url === undefined) {
    try {
      url = new URL(raw);
    } catch {
      url = null;
    }
    if (urls.size >= 10_000) urls.clear();
    urls.set(raw, url);
  }
  return url;
}

type ConnectLookup = (hostname: string, options: { all?: boolean; family?: number | string }, callback: (...args: unknown[]) => void) => void;

/**
 * The `lookup` a POST connects with: resolves with `resolve` and hands back only the addresses
 * that pass the target check (all of them when `allowPrivate`), calling `onRefused` with the
 * reason when none is left. Node 20 connects with `autoSelectFamily` (happy eyeballs) and then
 * asks for every address (`options.all`), expecting a list; a plain connect asks for one, of a
 * family or any. Each is answered from the same resolution.
 */
export function connectLookup(resolve: Lookup, allowPrivate: boolean, onRefused: (reason: string) => void): ConnectLookup {
  return (hostname, options, callback) => {
    resolve(hostname).then(
      (addrs) => {
        const wanted = familyOf(options.family);
        const ofFamily = wanted ? addrs.filter((a) => a.family === wanted) : addrs;
        const usable = allowPrivate ? ofFamily : ofFamily.filter((a) => !isBlockedAddress(a.address));
        if (usable.length === 0) {
          const reason = ofFamily.length === 0 ? `${hostname} resolves to no address` : `${hostname} resolves to no public address`;
          onRefused(reason);
          return callback(Object.assign(new Error(reason), { code: 'ENOTFOUND' }), options.all ? [] : '', options.all ? undefined : 4);
        }
        if (options.all) return callback(null, usable.map((a) => ({ address: a.address, family: a.family })));
        callback(null, usable[0].address, usable[0].family);
      },
      (err: Error) => callback(err as NodeJS.ErrnoException, options.all ? [] : '', options.all ? undefined : 4),
    );
  };
}

const agentOptions = { keepAlive: true, maxSockets: 64 };

/**
 * Keep-alive agents, one per target rule and trust: a kept connection was checked when it was
 * made, so one made where private targets are allowed must never serve a request where they are
 * not (nor one verified with more CAs one with fewer). A deployment uses one of each; `extraCa`
 * adds a private CA's PEM to node's default roots.
 */
const pools = new Map<string, { http: http.Agent; https: https.Agent }>();
function agentsFor(opts: Pick<SenderOptions, 'allowPrivate' | 'extraCa'>): { http: http.Agent; https: https.Agent } {
  const key = `${opts.allowPrivate}|${opts.extraCa ?? ''}`;
  let pool = pools.get(key);
  if (!pool) {
    pool = { http: new http.Agent(agentOptions), https: new https.Agent(opts.extraCa ? { ...agentOptions, ca: [...tls.rootCertificates, opts.extraCa] } : agentOptions) };
    pools.set(key, pool);
  }
  return pool;
}

/**
 * POSTs one webhook body. The target is checked again here, on the addresses the name resolves
 * to at connect time: a URL that passed the configuration check may resolve anywhere later (DNS
 * rebinding), so every resolved address must be public unless `allowPrivate`. Redirects are not
 * followed (a 3xx is a failure); any 2xx is delivered.
 */
export function postWebhook(rawUrl: string, body: string, headers: Record<string, string>, opts: SenderOptions): Promise<SendResult> {
  const url = parsedUrl(rawUrl);
  if (!url) return Promise.resolve({ ok: false, error: 'invalid webhook URL' });
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && opts.allowPrivate)) return Promise.resolve({ ok: false, error: 'webhook URL must use https' });
  let refused: string | undefined;
  const lookup = connectLookup(opts.lookup ?? systemLookup, opts.allowPrivate, (reason) => (refused = reason));
  // An IP literal never goes through `lookup`: check it here.
  if (!opts.allowPrivate && isBlockedAddress(url.hostname.replace(/^\[|\]$/g, ''))) return Promise.resolve({ ok: false, error: 'webhook target is a private address' });
  const isHttps = url.protocol === 'https:';
  return new Promise<SendResult>((done) => {
    let settled = false;
    const finish = (r: SendResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(responseTimer);
      clearTimeout(connectTimer);
      done(r);
    };
    const req = (isHttps ? https : http).request(url, {
      method: 'POST',
      headers: { ...headers, 'content-length': Buffer.byteLength(body), 'user-agent': 'chainpipe-webhooks/1' },
      agent: agentsFor(opts)[isHttps ? 'https' : 'http'],
      lookup: lookup as unknown as LookupFunction,
    });
    // The connect timeout bounds only a new connection (a reused keep-alive socket has one, and
    // no timer is armed for it): a socket idle timeout would also cut a receiver that is slower
    // to answer than to connect. A request waiting for a free socket of the agent is bounded by
    // the response timer.
    let connectTimer: NodeJS.Timeout | undefined;
    req.on('socket', (socket) => {
      if (!socket.connecting) return;
      connectTimer = setTimeout(() => req.destroy(new Error(`no connection in ${opts.connectTimeoutMs} ms`)), opts.connectTimeoutMs);
      socket.once(isHttps ? 'secureConnect' : 'connect', () => clearTimeout(connectTimer));
    });
    const responseTimer = setTimeout(() => {
      req.destroy(new Error(`no response in ${opts.responseTimeoutMs} ms`));
    }, opts.responseTimeoutMs);
    req.on('error', (err) => finish({ ok: false, error: refused ?? err.message }));
    req.on('response', (res) => {
      const status = res.statusCode ?? 0;
      let read = 0;
      res.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read > opts.maxResponseBytes) res.destroy();
      });
      res.on('error', () => undefined);
      res.resume();
      finish(status >= 200 && status < 300 ? { ok: true, status } : { ok: false, status, error: `HTTP ${status}` });
    });
    req.end(body);
  });
}
