import express, { type Request } from 'express';
import type { Redis } from 'ioredis';
import { Counter, Histogram, type Registry } from 'prom-client';
import { AmountBelowProviderMinimum, netQuote, ProviderError, tokenRefOf, type ChannelAdapter, type TokenRef } from '@chainpipe/aggregator';
import type { Contracts, HttpAggChannelQuote, HttpAggQuoteStreamBody, HttpAggQuoteStreamQuery, SseAggQuoteDone, SseAggQuoteError } from '@chainpipe/contracts';
import type { Knex } from '@chainpipe/db';
import { commissionOf, outAfterCommission } from '@chainpipe/orders';
import { ApiRoutes, leaveRequestDeadline, msgEnvelope, requestParams, sendError, type EnvelopeStyle, type HandlerFor, type RequestIds, type RouteRateLimit } from '@chainpipe/http';
import { type CryptoQuoteMessage, type TokenRow } from '@chainpipe/price';
import { ChannelRepository, type ChannelRow as StoredChannel } from '@chainpipe/order-store';
import { QuoteStore, ReferenceRepository, ReferenceSnapshot } from '@chainpipe/price-store';
import { RefreshedValue, systemClock, timeoutSignal, type Clock, type Logger } from '@chainpipe/runtime';
import { HeldStream } from './held-stream';
import { parseQuoteRequest, sseEvent, type QuoteRequest } from './request';

/** The events of the quote stream by name, each the type of its schema (the stream's AsyncAPI channel). */
interface QuoteStreamEvents {
  channel: HttpAggChannelQuote;
  error: SseAggQuoteError;
  done: SseAggQuoteDone;
}

/** The rate limit of the quote stream (GET and POST count together). */
const QUOTE_STREAM_LIMIT = 'quoteStream';

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
 * How long the stream's reference rows are answered from memory: the channel list is read again
 * behind the requests once a second old and never answers past 5 s (a channel disabled is out of
 * new streams within 5 s); tokens are read again every 30 s and never answer past 2 min, and an
 * unknown token id reloads them at once (at most once a second), so a new token is quoted at
 * once. The destination token's USD price (a display figure of the events) is read from Redis
 * again once a second old and never answers past 3 s.
 */
export const QUOTE_REFERENCE_AGE = {
  channelsRefreshMs: 1_000,
  channelsMaxAgeMs: 5_000,
  tokensRefreshMs: 30_000,
  tokensMaxAgeMs: 120_000,
  tokenMissReloadMs: 1_000,
  usdPriceRefreshMs: 1_000,
  usdPriceMaxAgeMs: 3_000,
} as const;

type ChannelRow = Omit<StoredChannel, 'enabled'>;

const tokenRef = (t: TokenRow): TokenRef => tokenRefOf(t);

/** A display figure: whole tokens × USD price, two decimals (never used in any computation). */
function usd(units: bigint, decimals: number, price: number | undefined): string {
  if (price === undefined) return '';
  const whole = Number(units) / 10 ** decimals;
  return (whole * price).toFixed(2);
}

/**
 * `GET` and `POST /api/v2/quote/stream`: pre-stream errors as JSON envelopes, then an SSE stream
 * with one `channel` event per channel as soon as it answers, an `error` event per failed
 * channel, and `done` last. Closing the connection aborts every upstream call still running.
 */
export function quotesModule(deps: QuotesModuleDeps): { name: string; envelopeFor(path: string): EnvelopeStyle | undefined; api: ApiRoutes } {
  const clock = deps.clock ?? systemClock;
  const reference = new ReferenceRepository(deps.db);
  const storedChannels = new ChannelRepository(deps.db);
  const tokens = new ReferenceSnapshot(reference, {
    refreshMs: QUOTE_REFERENCE_AGE.tokensRefreshMs,
    maxAgeMs: QUOTE_REFERENCE_AGE.tokensMaxAgeMs,
    missReloadMs: QUOTE_REFERENCE_AGE.tokenMissReloadMs,
    clock,
  });
  const channelList = new RefreshedValue({
    load: () => storedChannels.list(),
    refreshMs: QUOTE_REFERENCE_AGE.channelsRefreshMs,
    maxAgeMs: QUOTE_REFERENCE_AGE.channelsMaxAgeMs,
    clock,
  });
  const quoteStore = new QuoteStore(deps.redis);
  // One entry per destination token asked for (known tokens only: an unknown one was refused).
  const usdPrices = new Map<string, RefreshedValue<CryptoQuoteMessage | undefined>>();
  const usdPriceOf = (externalId: string): Promise<CryptoQuoteMessage | undefined> => {
    let price = usdPrices.get(externalId);
    if (!price) {
      price = new RefreshedValue({
        load: async () => (await quoteStore.readQuotes([externalId]))[0],
        refreshMs: QUOTE_REFERENCE_AGE.usdPriceRefreshMs,
        maxAgeMs: QUOTE_REFERENCE_AGE.usdPriceMaxAgeMs,
        clock,
      });
      usdPrices.set(externalId, price);
    }
    return price.get();
  };
  const byKind = new Map(deps.adapters.map((a) => [a.kind, a]));
  const log = deps.logger.child({ component: 'quote-stream' });
  const metrics = {
    events: new Counter({ name: 'chainpipe_agg_quote_events_total', help: 'SSE events of the quote stream by event', labelNames: ['event'], registers: [deps.registry] }),
    upstream: new Histogram({ name: 'chainpipe_agg_channel_quote_seconds', help: 'Channel quote duration by channel kind and outcome', labelNames: ['kind', 'outcome'], buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60], registers: [deps.registry] }),
  };
  const json = express.json({ limit: deps.bodyLimitBytes, strict: false, type: () => true });
  const api = new ApiRoutes({
    contracts: deps.contracts,
    jsonBody: (req, res, next) =>
      json(req, res, (err?: unknown) => {
        if ((err as { type?: string } | undefined)?.type === 'entity.parse.failed') return sendError(res, 400, 'invalid request body');
        next(err);
      }),
    rateLimits: { [QUOTE_STREAM_LIMIT]: deps.streamLimit },
  });

  /**
   * The stream's reference rows: tokens and the channel list from memory (QUOTE_REFERENCE_AGE),
   * the promo (when one is given) read alongside, so a stream's first channel event waits for
   * the slowest of these and the upstream, and usually for no Postgres round trip at all.
   * The refusals keep their order: tokens, then the channel, then no channel left.
   */
  async function prepare(q: QuoteRequest): Promise<{ src: TokenRow; dst: TokenRow; channels: ChannelRow[]; discount: number | null } | string> {
    const [[src, dst], listed, discount] = await Promise.all([
      tokens.tokensByIds([q.srcTokenId, q.dstTokenId]),
      channelList.get(),
      q.promoCode ? storedChannels.promoDiscountPct(q.promoCode) : null,
    ]);
    for (const [row, tokenId] of [[src, q.srcTokenId], [dst, q.dstTokenId]] as const) {
      if (!row) return reference.unlistedTokenReason(tokenId);
    }
    if (q.channelId !== null && !listed.some((c) => c.id === q.channelId)) return 'channel not found';
    const channels: ChannelRow[] = listed
      .filter((c) => c.enabled && (q.channelId === null || c.id === q.channelId) && byKind.has(c.adapter_kind))
      .map(({ id, name, icon_url, adapter_kind, base_fee_pct }) => ({ id, name, icon_url, adapter_kind, base_fee_pct }));
    if (channels.length === 0) return 'no available channels';
    return { src: src!, dst: dst!, channels, discount };
  }

  const stream =
    <Ids extends RequestIds>(read: (...args: Parameters<HandlerFor<Ids>>) => HttpAggQuoteStreamQuery | HttpAggQuoteStreamBody): HandlerFor<Ids> =>
    async (req, res, next) => {
      // The schemas leave the required fields to the parser, which gives them the spec's messages.
      const parsed = parseQuoteRequest({ ...read(req, res, next) });
      if (!parsed.ok) return sendError(res, 400, parsed.msg);
      const q = parsed.value;
      const [ready, keyRateBp] = await Promise.all([prepare(q), deps.keyRateOf ? deps.keyRateOf(req) : null]);
      if (typeof ready === 'string') return sendError(res, 400, ready);
      const commission = commissionOf(q.amountIn, keyRateBp);
      const { src, dst, channels, discount } = ready;
      // The USD display price is read while the channels are asked, not before them. It is a
      // display figure only: without Redis the events carry an empty `estimated_out_usd`.
      const dstPriceRead = dst.external_id
        ? usdPriceOf(dst.external_id).catch(
            (err: unknown) => {
              log.warn({ msg: 'usd_price_unavailable', err: (err as Error)?.message });
              return undefined;
            },
          )
        : Promise.resolve(undefined);

      // From here the stream keeps its own time (the upstream timeout, heartbeats): the
      // request deadline of ordinary requests would cut it with a 504 before the spec's 60 s.
      leaveRequestDeadline(res);

      // The stream starts with the first channel quote, or when no channel has answered within
      // the heartbeat period (a quiet stream then gets heartbeats). Until then nothing is sent, so
      // when every channel fails first the answer is still the spec's pre-stream 502.
      const abort = new AbortController();
      let finished = false;
      res.on('close', () => {
        if (!finished) abort.abort();
      });
      const sse = new HeldStream(
        {
          open: (flush) => {
            res.status(200);
            res.setHeader('content-type', 'text/event-stream; charset=utf-8');
            res.setHeader('cache-control', 'no-cache, no-transform');
            res.setHeader('x-accel-buffering', 'no');
            res.setHeader('connection', 'keep-alive');
            res.socket?.setNoDelay(true);
            if (flush) res.flushHeaders();
          },
          write: (chunk) => void res.write(chunk),
          writable: () => !res.writableEnded && !abort.signal.aborted,
        },
        deps.heartbeatMs,
        clock,
      );
      const write = <E extends keyof QuoteStreamEvents>(name: E, data: QuoteStreamEvents[E]) => {
        if (res.writableEnded || abort.signal.aborted) return;
        metrics.events.inc({ event: name });
        sse.write(sseEvent(name, data));
      };
      let failures = 0;
      let timeouts = 0;
      try {
        await Promise.all(
          channels.map(async (c) => {
            const adapter = byKind.get(c.adapter_kind)!;
            const deadline = timeoutSignal(clock, deps.upstreamTimeoutMs, abort.signal);
            const t0 = process.hrtime.bigint();
            try {
              const quote = await adapter.quote({
                src: tokenRef(src), dst: tokenRef(dst), amountIn: q.amountIn, signal: deadline.signal, timeoutMs: deps.upstreamTimeoutMs,
              });
              const dstPrice = await dstPriceRead;
              const channelNet = netQuote(quote.amountOut, q.amountIn, Number(c.base_fee_pct), discount);
              const net = { ...channelNet, estimatedOut: outAfterCommission(channelNet.estimatedOut, q.amountIn, commission) };
              const event: HttpAggChannelQuote = {
                channel_id: c.id,
                name: c.name,
                symbol: dst.symbol,
                channel_icon: c.icon_url ?? '',
                estimated_out_str: net.estimatedOut.toString(),
                estimated_out_usd: usd(net.estimatedOut, dst.decimals, dstPrice?.usd.price),
                channel_fee: net.channelFeePct,
                channel_fee_original: Number(c.base_fee_pct),
                promo_applied: discount !== null,
                discount_pct: discount,
              };
              metrics.upstream.observe({ kind: c.adapter_kind, outcome: 'ok' }, Number(process.hrtime.bigint() - t0) / 1e9);
              // Held, then begun: the first event's write carries the response head.
              write('channel', event);
              sse.begin();
            } catch (err) {
              if (err instanceof AmountBelowProviderMinimum) {
                // The provider answered: the amount is under its minimum. The channel's error event
                // carries the order creation's refusal; no upstream failure (nor a pre-stream 502).
                metrics.upstream.observe({ kind: c.adapter_kind, outcome: 'below_minimum' }, Number(process.hrtime.bigint() - t0) / 1e9);
                write('error', { channel_id: c.id, msg: 'amount_in below minimum' });
                return;
              }
              // this deadline, or the same one on the provider call's own timer
              const timedOut = (deadline.timedOut() || (err instanceof ProviderError && err.kind === 'timeout')) && !abort.signal.aborted;
              metrics.upstream.observe({ kind: c.adapter_kind, outcome: timedOut ? 'timeout' : 'error' }, Number(process.hrtime.bigint() - t0) / 1e9);
              if (abort.signal.aborted) return; // the client left: nothing to tell
              failures++;
              if (timedOut) timeouts++;
              log.warn({ msg: 'channel_quote_failed', channel: c.id, timedOut, err: (err as Error)?.message });
              write('error', { channel_id: c.id, msg: timedOut ? 'quote service timed out' : 'quote service unavailable' });
            } finally {
              deadline.cancel();
            }
          }),
        );
        if (!sse.started && !abort.signal.aborted && failures === channels.length) {
          // Every channel failed before the stream began: the spec's pre-stream error.
          sse.close();
          metrics.events.inc({ event: 'pre_stream_502' });
          return sendError(res, 502, timeouts === failures ? 'quote service timed out' : 'quote service unavailable');
        }
        write('done', {});
        sse.begin();
      } finally {
        finished = true;
        sse.close();
        if (!res.writableEnded && sse.started) res.end();
      }
    };

  const doc = {
    summary: 'Stream quotes of every channel (SSE)',
    description:
      'Errors before the stream starts are JSON envelopes: 400 for the request, tokens and channels; 502 `quote service timed out` / `quote service unavailable` when every channel failed before the stream began (it begins with the first channel quote, or after the heartbeat period without one). Then `text/event-stream; charset=utf-8`: a `channel` event per channel as it answers (`http/agg/channel-quote`), an `error` event `{channel_id, msg}` per failed channel (others continue; a channel past the upstream timeout, 60 s by default, is `quote service timed out`), and one `done` `{}` last. Once the request is checked the stream is outside the request deadline; a quiet stream gets an SSE comment (`: heartbeat`) every heartbeat period so that proxies keep it open. Closing the connection cancels every upstream call. No key is needed; with an integrator key (`X-Integrator-Api-Key` or `Authorization: ApiKey <key>`) of an active integrator each `estimated_out_str` (and `estimated_out_usd`) is after that key\'s commission, the figure an order of that key is checked against; any other key is ignored. Tokens, channels and the USD price are read from memory, refreshed behind the requests: a channel enabled or disabled is seen by new streams within 5 s, a token change within 2 minutes (a new token id at once).',
    tags: ['quotes'],
    auth: 'none',
    rateLimit: QUOTE_STREAM_LIMIT,
    ok: { data: { type: 'string' }, bare: true, mediaType: 'text/event-stream', description: 'the event stream', example: 'event: done\ndata: {}\n\n' },
    errors: { 502: '`quote service timed out` / `quote service unavailable`: every channel failed before the stream began' },
  } as const;
  api.route(
    { ...doc, method: 'get', path: '/api/v2/quote/stream', request: { query: 'http/agg/quote-stream-query' } },
    stream<{ query: 'http/agg/quote-stream-query' }>((_req, res) => requestParams(res)),
  );
  api.route(
    { ...doc, method: 'post', path: '/api/v2/quote/stream', request: { body: 'http/agg/quote-stream-body', bodyExample: { src_token_id: 101, dst_token_id: 1001, amount_in: '100000000000000000', slippage: 0.01 } } },
    stream<{ body: 'http/agg/quote-stream-body' }>((req) => req.body),
  );
  return { name: 'quotes', envelopeFor: (path) => (path.startsWith('/api/v2/quote/') ? msgEnvelope : undefined), api };
}
