import { AmountBelowProviderMinimum, ProviderError, tokenRefOf, type ChannelAdapter } from '@chainpipe/aggregator';
import type { HttpAggChannelQuote, SseAggQuoteDone, SseAggQuoteError } from '@chainpipe/contracts';
import { commissionOf } from '@chainpipe/orders';
import type { CryptoQuoteMessage, TokenRow } from '@chainpipe/price';
import { timeoutSignal, type Clock, type Logger } from '@chainpipe/runtime';
import { channelQuoteEvent, type QuoteChannel } from './channel-quote';
import { HeldStream } from './held-stream';
import type { QuoteStreamMetrics } from './metrics';
import type { QuoteReference } from './reference';
import { sseEvent, type QuoteRequest } from './request';

/** The events of the quote stream by name, each the type of its schema (the stream's AsyncAPI channel). */
interface QuoteStreamEvents {
  channel: HttpAggChannelQuote;
  error: SseAggQuoteError;
  done: SseAggQuoteDone;
}

/** A checked request with what it is quoted from: its tokens, the channels to ask, the promo's discount. */
export interface QuotePlan {
  request: QuoteRequest;
  src: TokenRow;
  dst: TokenRow;
  channels: QuoteChannel[];
  discount: number | null;
}

/** The response the stream is written to (the route's HTTP response). */
export interface QuoteStreamResponse {
  /** Status 200 and the SSE headers; `flush`: send the head now (no event follows at once). */
  open(flush: boolean): void;
  write(chunk: string): void;
  /** True once the response ended. */
  ended(): boolean;
  end(): void;
  /** Called once when the client's connection closes. */
  onClose(listener: () => void): void;
  /** The pre-stream error envelope (nothing has been sent yet). */
  fail(status: number, msg: string): void;
}

export interface QuoteStreamDeps {
  reference: QuoteReference;
  adapters: readonly ChannelAdapter[];
  metrics: QuoteStreamMetrics;
  logger: Logger;
  /** Per-channel upstream timeout (spec: 60 s by default). */
  upstreamTimeoutMs: number;
  /** Comment line sent while a stream is quiet, so proxies keep it open. */
  heartbeatMs: number;
  /** Time of the stream's start grace, heartbeats and upstream timeouts. */
  clock: Pick<Clock, 'setTimeout' | 'setInterval' | 'now'>;
}

export interface QuoteStream {
  /** The plan of a checked request, or the spec's 400 message refusing it. */
  prepare(q: QuoteRequest): Promise<QuotePlan | string>;
  /**
   * Asks every channel of the plan and writes the stream: a `channel` event per channel as it
   * answers, an `error` event per failed channel, `done` last; or the pre-stream 502 when every
   * channel failed before the stream began. `keyRateBp`: the commission rate of the request's
   * integrator key, null without one (docs/decisions.md#d160).
   */
  run(plan: QuotePlan, keyRateBp: number | null, res: QuoteStreamResponse): Promise<void>;
}

/** The quote stream's use-cases: the request's reference rows and refusals, then the stream loop. */
export function quoteStream(deps: QuoteStreamDeps): QuoteStream {
  const { clock, reference, metrics } = deps;
  const byKind = new Map(deps.adapters.map((a) => [a.kind, a]));
  const log = deps.logger.child({ component: 'quote-stream' });

  /**
   * The stream's reference rows: tokens and the channel list from memory (QUOTE_REFERENCE_AGE),
   * the promo (when one is given) read alongside, so a stream's first channel event waits for
   * the slowest of these and the upstream, and usually for no Postgres round trip at all.
   * The refusals keep their order: tokens, then the channel, then no channel left.
   */
  async function prepare(q: QuoteRequest): Promise<QuotePlan | string> {
    const [[src, dst], listed, discount] = await Promise.all([
      reference.tokensByIds([q.srcTokenId, q.dstTokenId]),
      reference.channels(),
      q.promoCode ? reference.promoDiscountPct(q.promoCode) : null,
    ]);
    for (const [row, tokenId] of [[src, q.srcTokenId], [dst, q.dstTokenId]] as const) {
      if (!row) return reference.unlistedTokenReason(tokenId);
    }
    if (q.channelId !== null && !listed.some((c) => c.id === q.channelId)) return 'channel not found';
    const channels: QuoteChannel[] = listed
      .filter((c) => c.enabled && (q.channelId === null || c.id === q.channelId) && byKind.has(c.adapter_kind))
      .map(({ id, name, icon_url, adapter_kind, base_fee_pct }) => ({ id, name, icon_url, adapter_kind, base_fee_pct }));
    if (channels.length === 0) return 'no available channels';
    return { request: q, src: src!, dst: dst!, channels, discount };
  }

  async function run(plan: QuotePlan, keyRateBp: number | null, res: QuoteStreamResponse): Promise<void> {
    const { request: q, src, dst, channels, discount } = plan;
    const commission = commissionOf(q.amountIn, keyRateBp);
    // The USD display price is read while the channels are asked, not before them. It is a
    // display figure only: without Redis the events carry an empty `estimated_out_usd`.
    const dstPriceRead: Promise<CryptoQuoteMessage | undefined> = dst.external_id
      ? reference.usdPriceOf(dst.external_id).catch((err: unknown) => {
          log.warn({ msg: 'usd_price_unavailable', err: (err as Error)?.message });
          return undefined;
        })
      : Promise.resolve(undefined);

    // The stream starts with the first channel quote, or when no channel has answered within
    // the heartbeat period (a quiet stream then gets heartbeats). Until then nothing is sent, so
    // when every channel fails first the answer is still the spec's pre-stream 502.
    const abort = new AbortController();
    let finished = false;
    res.onClose(() => {
      if (!finished) abort.abort();
    });
    const sse = new HeldStream(
      { open: (flush) => res.open(flush), write: (chunk) => res.write(chunk), writable: () => !res.ended() && !abort.signal.aborted },
      deps.heartbeatMs,
      clock,
    );
    const write = <E extends keyof QuoteStreamEvents>(name: E, data: QuoteStreamEvents[E]) => {
      if (res.ended() || abort.signal.aborted) return;
      metrics.event(name);
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
              src: tokenRefOf(src), dst: tokenRefOf(dst), amountIn: q.amountIn, signal: deadline.signal, timeoutMs: deps.upstreamTimeoutMs,
            });
            const dstPrice = await dstPriceRead;
            const event = channelQuoteEvent({ channel: c, dst, amountIn: q.amountIn, amountOut: quote.amountOut, discountPct: discount, commission, dstUsdPrice: dstPrice?.usd.price });
            metrics.upstream(c.adapter_kind, 'ok', t0);
            // Held, then begun: the first event's write carries the response head.
            write('channel', event);
            sse.begin();
          } catch (err) {
            if (err instanceof AmountBelowProviderMinimum) {
              // The provider answered: the amount is under its minimum. The channel's error event
              // carries the order creation's refusal; no upstream failure (nor a pre-stream 502).
              metrics.upstream(c.adapter_kind, 'below_minimum', t0);
              write('error', { channel_id: c.id, msg: 'amount_in below minimum' });
              return;
            }
            // this deadline, or the same one on the provider call's own timer
            const timedOut = (deadline.timedOut() || (err instanceof ProviderError && err.kind === 'timeout')) && !abort.signal.aborted;
            metrics.upstream(c.adapter_kind, timedOut ? 'timeout' : 'error', t0);
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
        metrics.event('pre_stream_502');
        return res.fail(502, timeouts === failures ? 'quote service timed out' : 'quote service unavailable');
      }
      write('done', {});
      sse.begin();
    } finally {
      finished = true;
      sse.close();
      if (!res.ended() && sse.started) res.end();
    }
  }

  return { prepare, run };
}
