import type { Request, Response } from 'express';
import type { HttpAggQuoteStreamBody, HttpAggQuoteStreamQuery } from '@chainpipe/contracts';
import { leaveRequestDeadline, requestParams, sendError, type ApiRoutes, type HandlerFor, type RequestIds } from '@chainpipe/http';
import { parseQuoteRequest } from './request';
import type { QuoteStream, QuoteStreamResponse } from './stream';

/** The rate limit of the quote stream (GET and POST count together; a name in the module's `ApiRoutes` rate limits). */
export const QUOTE_STREAM_LIMIT = 'quoteStream';

/** The HTTP response as the stream writes it: SSE head, chunks, the pre-stream error envelope. */
function sseResponse(res: Response): QuoteStreamResponse {
  return {
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
    ended: () => res.writableEnded,
    end: () => void res.end(),
    onClose: (listener) => void res.on('close', listener),
    fail: (status, msg) => sendError(res, status, msg),
  };
}

/**
 * `GET` and `POST /api/v2/quote/stream`: pre-stream errors as JSON envelopes, then an SSE stream
 * with one `channel` event per channel as soon as it answers, an `error` event per failed
 * channel, and `done` last. Closing the connection aborts every upstream call still running.
 * `keyRateOf`: the commission rate of the request's integrator key (no key needed; see
 * `QuotesModuleDeps.keyRateOf`).
 */
export function quoteRoutes(api: ApiRoutes, quotes: QuoteStream, keyRateOf?: (req: Request) => Promise<number | null>): void {
  const stream =
    <Ids extends RequestIds>(read: (...args: Parameters<HandlerFor<Ids>>) => HttpAggQuoteStreamQuery | HttpAggQuoteStreamBody): HandlerFor<Ids> =>
    async (req, res, next) => {
      // The schemas leave the required fields to the parser, which gives them the spec's messages.
      const parsed = parseQuoteRequest({ ...read(req, res, next) });
      if (!parsed.ok) return sendError(res, 400, parsed.msg);
      const [plan, keyRateBp] = await Promise.all([quotes.prepare(parsed.value), keyRateOf ? keyRateOf(req) : null]);
      if (typeof plan === 'string') return sendError(res, 400, plan);
      // From here the stream keeps its own time (the upstream timeout, heartbeats): the
      // request deadline of ordinary requests would cut it with a 504 before the spec's 60 s.
      leaveRequestDeadline(res);
      await quotes.run(plan, keyRateBp, sseResponse(res));
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
}
