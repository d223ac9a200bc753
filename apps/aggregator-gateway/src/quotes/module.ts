import type { Request } from 'express';
import type { Redis } from 'ioredis';
import type { Registry } from 'prom-client';
import type { ChannelAdapter } from '@chainpipe/aggregator';
import type { Contracts } from '@chainpipe/contracts';
import type { Knex } from '@chainpipe/db';
import { ApiRoutes, msgEnvelope, type EnvelopeStyle, type RouteRateLimit } from '@chainpipe/http';
import { systemClock, type Clock, type Logger } from '@chainpipe/runtime';
import { gatewayJsonBody } from '../json-body';
import { quoteStreamMetrics } from './metrics';
import { quoteReferenceFrom } from './reference';
import { QUOTE_STREAM_LIMIT, quoteRoutes } from './routes';
import { quoteStream } from './stream';

export interface QuotesModuleDeps {
  db: Knex;
  redis: Redis;
  contracts: Contracts;
  adapters: readonly ChannelAdapter[];
  logger: Logger;
  registry: Registry;
  bodyLimitBytes: number;
  /** Per-channel upstream timeout (spec: 60 s by default). */
  upstreamTimeoutMs: number;
  /** Comment line sent while a stream is quiet, so proxies keep it open. */
  heartbeatMs: number;
  /** Time of the stream's start grace, heartbeats and upstream timeouts, and of the reference rows' age. */
  clock?: Pick<Clock, 'setTimeout' | 'setInterval' | 'now'>;
  /** Streams a client may open (`RateLimits.limit`, per client: the stream needs no key); unlimited without. */
  streamLimit?: RouteRateLimit;
  /**
   * The commission rate (basis points) of the integrator key a request carries, null without a
   * valid key of an active integrator: the stream needs no key, but given one its estimates are
   * after that key's commission, as the order's will be (docs/decisions.md#d160).
   */
  keyRateOf?: (req: Request) => Promise<number | null>;
}

/**
 * The SSE quote stream (`/api/v2/quote/stream`) as one route module of the aggregator gateway:
 * its routes (`routes.ts`: parse and answer) over the stream's use-cases (`stream.ts`: refusals,
 * the channel quotes, the stream loop), which read tokens, channels and prices through the
 * caches of `reference.ts`; its metrics in `metrics.ts`. Its own `ApiRoutes` (body parser, rate
 * limit) and the spec's `{code, msg, data}` envelope before the stream starts.
 */
export function quotesModule(deps: QuotesModuleDeps): { name: string; envelopeFor(path: string): EnvelopeStyle | undefined; api: ApiRoutes } {
  const clock = deps.clock ?? systemClock;
  const stream = quoteStream({
    reference: quoteReferenceFrom({ db: deps.db, redis: deps.redis, clock }),
    adapters: deps.adapters,
    metrics: quoteStreamMetrics(deps.registry),
    logger: deps.logger,
    upstreamTimeoutMs: deps.upstreamTimeoutMs,
    heartbeatMs: deps.heartbeatMs,
    clock,
  });
  const api = new ApiRoutes({
    contracts: deps.contracts,
    jsonBody: gatewayJsonBody(deps.bodyLimitBytes),
    rateLimits: { [QUOTE_STREAM_LIMIT]: deps.streamLimit },
  });
  quoteRoutes(api, stream, deps.keyRateOf);
  return { name: 'quotes', envelopeFor: (path) => (path.startsWith('/api/v2/quote/') ? msgEnvelope : undefined), api };
}
