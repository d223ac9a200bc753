import { BlockList, isIP, isIPv4 } from 'node:net';
import type { Request, RequestHandler, Response } from 'express';
import { Counter, type Registry } from 'prom-client';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type IRateLimiterOptions } from 'rate-limiter-flexible';
import type { Redis } from '@chainpipe/redis';
import type { Field, Logger } from '@chainpipe/runtime';
import { sendError } from './envelope';

/**
 * Request rate limits, one mechanism for every public API: fixed windows counted in Redis by
 * rate-limiter-flexible, so every copy of an app shares one count per client and per key. A
 * route names its limit (`RouteSpec.rateLimit`); `ApiRoutes` runs the per-client check before
 * authentication (a flood of bad keys costs no key look-up) and the per-key check after it. A
 * request past a limit gets 429 with `Retry-After` (whole seconds until the window ends) in the
 * route's envelope, and is counted in `chainpipe_rate_limit_refusals_total` by route and scope.
 *
 * While Redis cannot answer (not connected, or a command fails) each copy counts on its own in
 * memory with the same limits (rate-limiter-flexible's insurance limiter): the limits stay, at
 * most one allowance per copy, and `chainpipe_rate_limit_store_fallbacks_total` counts the
 * decisions so taken (docs/decisions.md).
 */

/** A limit: at most `points` requests per window of `seconds`. */
export interface RateLimit {
  points: number;
  seconds: number;
}

const RATE_TEXT = /^(\d+)\s*\/\s*(\d*)\s*(s|m|h)$/;
const UNIT_SECONDS = { s: 1, m: 60, h: 3600 } as const;

/** `<requests>/<window>` (`600/1m`, `20/10s`, `5000/1h`; a bare unit is one of it) or `off`; undefined for `off`. */
export function parseRateLimit(text: string): RateLimit | undefined | { error: string } {
  const t = text.trim().toLowerCase();
  if (t === 'off') return undefined;
  const m = RATE_TEXT.exec(t);
  if (!m) return { error: `must be <requests>/<window> (600/1m, 20/10s, 5000/1h) or off, got ${JSON.stringify(text)}` };
  const points = Number(m[1]);
  const seconds = (m[2] === '' ? 1 : Number(m[2])) * UNIT_SECONDS[m[3] as keyof typeof UNIT_SECONDS];
  if (!Number.isSafeInteger(points) || points < 1) return { error: `must allow at least one request, got ${JSON.stringify(text)}` };
  if (!Number.isSafeInteger(seconds) || seconds < 1 || seconds > 86_400) return { error: `window must be 1 s to 1 day, got ${JSON.stringify(text)}` };
  return { points, seconds };
}

/**
 * A configuration field of a rate limit (`RATE_LIMIT_…`): `<requests>/<window>` or `off`,
 * validated at boot; its value is the text as written (the config reference shows it so),
 * read with `parseRateLimit`.
 */
export function rateLimitField(opts: { default: string; doc: string }): Field<string> {
  const checked = parseRateLimit(opts.default);
  if (checked && 'error' in checked) throw new Error(`rate limit default ${checked.error}`);
  return {
    kind: 'rate',
    doc: `${opts.doc} (\`<requests>/<window>\` with s, m or h, or \`off\`; 429 with Retry-After past it)`,
    secret: false,
    parse(raw) {
      const text = raw === undefined || raw.trim() === '' ? opts.default : raw.trim();
      const parsed = parseRateLimit(text);
      return parsed && 'error' in parsed ? { error: parsed.error } : { value: text };
    },
  };
}

/**
 * `RATE_LIMIT_TRUSTED_PROXIES`: the addresses or CIDR ranges of the proxies in front of an app
 * (a load balancer, an ingress), comma-separated, validated at boot; empty (the default) trusts
 * none. Only a request arriving from one of them has its client read from `X-Forwarded-For`.
 */
export function trustedProxiesField(): Field<string> {
  return {
    kind: 'list',
    doc: 'addresses or CIDR ranges (10.0.0.0/8, 2001:db8::/32) of the proxies in front of the app: a request arriving from one is counted by the rate limits under the client `X-Forwarded-For` names before them; empty trusts none (each connection\'s own peer counts)',
    secret: false,
    parse(raw) {
      const text = (raw ?? '').trim();
      const problem = trustedProxies(text);
      return problem instanceof BlockList ? { value: text } : { error: problem };
    },
  };
}

/** The trusted proxies of a `RATE_LIMIT_TRUSTED_PROXIES` text, or what is wrong with it. */
function trustedProxies(text: string): BlockList | string {
  const list = new BlockList();
  for (const item of text.split(',').map((s) => s.trim()).filter(Boolean)) {
    const [address, bits, extra] = item.split('/');
    const family = isIP(address);
    const prefix = bits === undefined ? (family === 6 ? 128 : 32) : Number(bits);
    if (!family || extra !== undefined || !Number.isInteger(prefix) || prefix < 0 || prefix > (family === 6 ? 128 : 32)) return `must list addresses or CIDR ranges, got ${JSON.stringify(item)}`;
    list.addSubnet(address, prefix, family === 6 ? 'ipv6' : 'ipv4');
  }
  return list;
}

/**
 * The address a request came from: the connection's peer, or, when the peer is a trusted proxy,
 * the last `X-Forwarded-For` entry that is not one (each proxy appends the address it saw, so
 * entries left of the first untrusted one are whatever the client wrote and never read).
 */
export function clientAddress(req: Pick<Request, 'headers' | 'socket'>, trusted: BlockList | undefined): string | undefined {
  let address = req.socket.remoteAddress;
  if (!trusted || address === undefined) return address;
  const header = req.headers['x-forwarded-for'];
  const hops = (Array.isArray(header) ? header.join(',') : (header ?? '')).split(',').map((s) => s.trim()).filter(Boolean);
  const isTrusted = (a: string) => {
    const plain = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(a)?.[1] ?? a;
    const family = isIP(plain);
    return family !== 0 && trusted.check(plain, family === 6 ? 'ipv6' : 'ipv4');
  };
  while (isTrusted(address) && hops.length > 0) {
    const next = hops.pop()!;
    if (!isIP(next)) break;
    address = next;
  }
  return address;
}

/** Whose requests a limit counts: the client's address, or the key the route authenticated. */
export type RateScope = 'client' | 'key';

/** A route's limits, made by `RateLimits.limit`: its checks, run by `ApiRoutes`. */
export interface RouteRateLimit {
  readonly name: string;
  /** The key a request's client address is counted under. */
  readonly clientOf: (req: Request) => string;
  /** Run before authentication: counts by client address. */
  readonly perClient?: RateCheck;
  /** Run after authentication: counts by the key the route's auth scheme found (`ApiAuth.keyOf`); a request without one is not counted here. */
  readonly perKey?: RateCheck;
}

/** One limit's check: `undefined` while allowed, else the seconds until it allows again (the request was refused and counted). */
export interface RateCheck {
  readonly limit: RateLimit;
  consume(id: string, route: string): Promise<number | undefined>;
}

/**
 * The address a client's requests are counted by: an IPv4 address as it is (an IPv4-mapped IPv6
 * one too), an IPv6 address by its /64 (one host is given a whole /64, so counting addresses
 * would let it rotate past any limit).
 */
export function clientAddressKey(address: string | undefined): string {
  if (!address) return 'unknown';
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1];
  if (isIPv4(address) || !address.includes(':')) return address;
  const zoneless = address.split('%')[0].toLowerCase();
  const [head, tail] = zoneless.split('::');
  const left = head ? head.split(':') : [];
  const right = tail !== undefined && tail ? tail.split(':') : [];
  const groups = tail === undefined ? left : [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right];
  return `${groups
    .slice(0, 4)
    .map((g) => (g === '' ? '0' : g.replace(/^0+(?=.)/, '')))
    .join(':')}::/64`;
}

export interface RateLimitsDeps {
  redis: Redis;
  registry: Registry;
  logger: Logger;
  /** `RATE_LIMIT_TRUSTED_PROXIES`; none trusted when absent or empty. */
  trustedProxies?: string;
}

/** The memory limiter a Redis limiter falls back to, counting each decision it takes. */
class FallbackLimiter extends RateLimiterMemory {
  constructor(
    opts: IRateLimiterOptions,
    private readonly used: () => void,
  ) {
    super(opts);
  }

  override consume(key: string | number, points?: number, options?: { [key: string]: unknown }): Promise<RateLimiterRes> {
    this.used();
    return super.consume(key, points, options);
  }
}

function metricsOf(registry: Registry) {
  // One registry per app: a second RateLimits of the app counts in the same series.
  const existing = <T>(name: string) => registry.getSingleMetric(name) as T | undefined;
  return {
    refusals:
      existing<Counter<'route' | 'scope'>>('chainpipe_rate_limit_refusals_total') ??
      new Counter({
        name: 'chainpipe_rate_limit_refusals_total',
        help: 'Requests and WebSocket connections refused with 429 by a rate limit or connection cap, by route and scope (client or key)',
        labelNames: ['route', 'scope'],
        registers: [registry],
      }),
    fallbacks:
      existing<Counter<'limit' | 'scope'>>('chainpipe_rate_limit_store_fallbacks_total') ??
      new Counter({
        name: 'chainpipe_rate_limit_store_fallbacks_total',
        help: "Rate-limit decisions taken in this copy's memory because Redis did not answer, by limit and scope",
        labelNames: ['limit', 'scope'],
        registers: [registry],
      }),
  };
}

/**
 * The app's rate limits on its Redis: `limit` makes a route's checks from configuration texts,
 * `refused` counts a refusal decided elsewhere (a WebSocket connection cap) in the same metric.
 */
export class RateLimits {
  private readonly metrics: ReturnType<typeof metricsOf>;
  private readonly trusted: BlockList | undefined;

  constructor(private readonly deps: RateLimitsDeps) {
    this.metrics = metricsOf(deps.registry);
    const trusted = trustedProxies(deps.trustedProxies ?? '');
    if (!(trusted instanceof BlockList)) throw new Error(`RATE_LIMIT_TRUSTED_PROXIES ${trusted}`);
    this.trusted = deps.trustedProxies?.trim() ? trusted : undefined;
  }

  /** The key a request's client is counted under (`clientAddressKey` of `clientAddress`). */
  readonly clientOf = (req: Request): string => clientAddressKey(clientAddress(req, this.trusted));

  /** A route's limits from `RATE_LIMIT_…` texts (`rateLimitField`); `off` or absent leaves that scope unlimited. */
  limit(name: string, texts: { perClient?: string; perKey?: string }): RouteRateLimit {
    const check = (scope: RateScope, text: string | undefined): RateCheck | undefined => {
      if (text === undefined) return undefined;
      const parsed = parseRateLimit(text);
      if (parsed && 'error' in parsed) throw new Error(`rate limit ${name} per ${scope}: ${parsed.error}`);
      return parsed ? this.check(name, scope, parsed) : undefined;
    };
    return { name, clientOf: this.clientOf, perClient: check('client', texts.perClient), perKey: check('key', texts.perKey) };
  }

  /** Counts a refusal of `route` (a template, never a raw path) by `scope`. */
  refused(route: string, scope: RateScope): void {
    this.metrics.refusals.inc({ route, scope });
  }

  /** Counts a decision of the limit `name` taken without Redis (a connection cap admitting while Redis fails). */
  storeFailed(name: string, scope: RateScope): void {
    this.metrics.fallbacks.inc({ limit: name, scope });
  }

  private check(name: string, scope: RateScope, limit: RateLimit): RateCheck {
    const keyPrefix = `ratelimit:${name}:${scope}`;
    const options = { keyPrefix, points: limit.points, duration: limit.seconds };
    const limiter = new RateLimiterRedis({
      ...options,
      storeClient: this.deps.redis,
      // Not connected: decided in memory at once, not after the client's reconnection attempts.
      rejectIfRedisNotReady: true,
      insuranceLimiter: new FallbackLimiter(options, () => this.storeFailed(name, scope)),
    });
    return {
      limit,
      consume: async (id, at) => {
        try {
          await limiter.consume(id);
          return undefined;
        } catch (refusal) {
          if (!(refusal instanceof RateLimiterRes)) throw refusal;
          this.refused(at, scope);
          return Math.max(1, Math.ceil(refusal.msBeforeNext / 1000));
        }
      },
    };
  }
}

/**
 * The handler of one check: counts the request under `idOf` (none: not counted) and answers 429
 * with `Retry-After` in the route's envelope past the limit. `route` is the template the metric
 * names.
 */
export function rateCheckHandler(check: RateCheck, route: string, idOf: (req: Request, res: Response) => string | undefined): RequestHandler {
  return (req, res, next) => {
    const id = idOf(req, res);
    if (id === undefined) return next();
    check.consume(id, route).then(
      (retryAfter) => {
        if (retryAfter === undefined) return next();
        res.setHeader('retry-after', String(retryAfter));
        sendError(res, 429, 'too many requests');
      },
      (err: unknown) => next(err),
    );
  };
}
