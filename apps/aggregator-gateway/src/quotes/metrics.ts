import { Counter, Histogram, type Registry } from 'prom-client';

/** How one channel's upstream quote call ended. */
export type ChannelQuoteOutcome = 'ok' | 'below_minimum' | 'timeout' | 'error';

/** The quote stream's metrics: the events it wrote and its channels' upstream calls. */
export interface QuoteStreamMetrics {
  /** One event of the stream (`channel`, `error`, `done`), or `pre_stream_502` (every channel failed before it began). */
  event(name: string): void;
  /** One channel's quote call, timed from `startedNs` (`process.hrtime.bigint()` when it was made). */
  upstream(kind: string, outcome: ChannelQuoteOutcome, startedNs: bigint): void;
}

export function quoteStreamMetrics(registry: Registry): QuoteStreamMetrics {
  const events = new Counter({ name: 'chainpipe_agg_quote_events_total', help: 'SSE events of the quote stream by event', labelNames: ['event'], registers: [registry] });
  const upstream = new Histogram({
    name: 'chainpipe_agg_channel_quote_seconds',
    help: 'Channel quote duration by channel kind and outcome',
    labelNames: ['kind', 'outcome'],
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [registry],
  });
  return {
    event: (name) => events.inc({ event: name }),
    upstream: (kind, outcome, startedNs) => upstream.observe({ kind, outcome }, Number(process.hrtime.bigint() - startedNs) / 1e9),
  };
}
