import { expect } from 'chai';
import { Registry } from 'prom-client';
import { ProviderError, type ChannelAdapter, type ProviderQuoteRequest } from '@chainpipe/aggregator';
import type { ChannelRow } from '@chainpipe/order-store';
import type { CryptoQuoteMessage, TokenRow } from '@chainpipe/price';
import { createLogger } from '@chainpipe/runtime';
import { ManualClock } from '@chainpipe/testing';
import { channelQuoteEvent } from '../src/quotes/channel-quote';
import { quoteStreamMetrics } from '../src/quotes/metrics';
import type { QuoteReference } from '../src/quotes/reference';
import type { QuoteRequest } from '../src/quotes/request';
import { quoteStream, type QuotePlan, type QuoteStreamResponse } from '../src/quotes/stream';

const logger = createLogger({ name: 'test', level: 'silent' });

const token = (id: number, symbol: string, decimals: number, externalId: string | null): TokenRow => ({
  id, chain_id: 1, chain_name: 'Ethereum', chain_type: 'evm', protocol_chain_id: '1', name: symbol, symbol, decimals, logo_url: null, contract_address: null, is_native: true, external_id: externalId,
});
const ETH = token(101, 'ETH', 18, 'eth');
const USDC = token(1001, 'USDC', 6, 'usdc');
const channel = (id: number, adapter_kind: string, enabled = true): ChannelRow => ({ id, name: `channel ${id}`, icon_url: null, adapter_kind, base_fee_pct: '1', enabled });
const request = (over: Partial<QuoteRequest> = {}): QuoteRequest => ({ srcTokenId: 101, dstTokenId: 1001, amountIn: 100n, slippage: 0.01, promoCode: null, channelId: null, ...over });

/** The stores as the stream reads them: the rows it was given, and what it asked for. */
function referenceOf(rows: { tokens: TokenRow[]; channels: ChannelRow[]; usdPrice?: number }): QuoteReference & { reasonsAsked: number[] } {
  const reasonsAsked: number[] = [];
  return {
    reasonsAsked,
    tokensByIds: async (ids) => ids.map((id) => rows.tokens.find((t) => t.id === id)),
    unlistedTokenReason: async (id) => (reasonsAsked.push(id), 'token not found'),
    channels: async () => rows.channels,
    promoDiscountPct: async () => null,
    usdPriceOf: async () => (rows.usdPrice === undefined ? undefined : ({ usd: { price: rows.usdPrice } } as CryptoQuoteMessage)),
  };
}

/** An adapter whose quote answers `amountOut`, fails with `error`, or waits for its signal. */
function adapter(kind: string, answer: { amountOut: bigint } | { error: Error } | 'silent'): ChannelAdapter & { asked: ProviderQuoteRequest[] } {
  const asked: ProviderQuoteRequest[] = [];
  return {
    kind,
    asked,
    quote: (req) => {
      asked.push(req);
      if (answer === 'silent') return new Promise((_resolve, reject) => req.signal.addEventListener('abort', () => reject(new Error('aborted'))));
      return 'error' in answer ? Promise.reject(answer.error) : Promise.resolve({ amountOut: answer.amountOut });
    },
    createDeposit: () => Promise.reject(new Error('not asked')),
    status: () => Promise.reject(new Error('not asked')),
  };
}

/** A response that records what the stream did with it. */
function recordingResponse() {
  const sent: string[] = [];
  let ended = false;
  const closeListeners: (() => void)[] = [];
  const res: QuoteStreamResponse = {
    open: (flush) => void sent.push(flush ? 'open, flushed' : 'open'),
    write: (chunk) => void sent.push(chunk),
    ended: () => ended,
    end: () => {
      ended = true;
      sent.push('end');
    },
    onClose: (listener) => void closeListeners.push(listener),
    fail: (status, msg) => {
      ended = true;
      sent.push(`${status} ${msg}`);
    },
  };
  return { res, sent, close: () => closeListeners.forEach((l) => l()) };
}

function streamOf(reference: QuoteReference, adapters: ChannelAdapter[], opts: { upstreamTimeoutMs?: number } = {}) {
  const registry = new Registry();
  const clock = new ManualClock();
  const stream = quoteStream({ reference, adapters, metrics: quoteStreamMetrics(registry), logger, upstreamTimeoutMs: opts.upstreamTimeoutMs ?? 60_000, heartbeatMs: 15_000, clock });
  return { stream, registry, clock };
}

const planOf = async (stream: ReturnType<typeof streamOf>['stream'], q: QuoteRequest): Promise<QuotePlan> => {
  const plan = await stream.prepare(q);
  if (typeof plan === 'string') throw new Error(plan);
  return plan;
};

describe('quote stream use-cases (quotes/stream.ts) over stand-in stores and adapters', () => {
  it('refuses in the spec order: an unknown token by the reference, an unlisted channel, then no channel left', async () => {
    const reference = referenceOf({ tokens: [ETH, USDC], channels: [channel(1, 'cn'), channel(2, 'thor', false)] });
    const { stream } = streamOf(reference, [adapter('cn', 'silent'), adapter('thor', 'silent')]);
    expect(await stream.prepare(request({ dstTokenId: 999 }))).to.equal('token not found');
    expect(reference.reasonsAsked).to.deep.equal([999]);
    expect(await stream.prepare(request({ channelId: 7 }))).to.equal('channel not found');
    expect(await stream.prepare(request({ channelId: 2 })), 'a disabled channel').to.equal('no available channels');
    const plan = await planOf(stream, request());
    expect(plan.channels.map((c) => c.id), 'enabled channels with an adapter').to.deep.equal([1]);
  });

  it("writes a channel event per answer (after the fee and the key's commission), an error per failure, done last", async () => {
    const reference = referenceOf({ tokens: [ETH, USDC], channels: [channel(1, 'cn'), channel(2, 'thor')], usdPrice: 2 });
    const cn = adapter('cn', { amountOut: 1_000_000n });
    const { stream, registry } = streamOf(reference, [cn, adapter('thor', { error: new ProviderError('thor', 'unavailable', 503) })]);
    const out = recordingResponse();
    await stream.run(await planOf(stream, request()), 100, out.res);
    expect(cn.asked.map((q) => [q.src.id, q.dst.id, q.amountIn, q.timeoutMs])).to.deep.equal([[101, 1001, 100n, 60_000]]);
    // 1,000,000 less the channel's 1 % fee, less the key's 1 % commission: 980,100 (0.9801 USDC at 2 USD)
    const channelEvent = out.sent.find((s) => s.startsWith('event: channel'))!;
    expect(JSON.parse(channelEvent.split('data: ')[1])).to.include({ channel_id: 1, symbol: 'USDC', estimated_out_str: '980100', estimated_out_usd: '1.96', channel_fee: 1, promo_applied: false });
    expect(out.sent.filter((s) => s.startsWith('event: ')).map((s) => s.split('\n')[0]).sort()).to.deep.equal(['event: channel', 'event: done', 'event: error']);
    expect(out.sent.at(-2)).to.equal('event: done\ndata: {}\n\n');
    expect(out.sent[0]).to.equal('open');
    expect(out.sent.at(-1)).to.equal('end');
    const events = (await registry.getSingleMetric('chainpipe_agg_quote_events_total')!.get()).values.map((v) => [v.labels.event, v.value]);
    expect(events).to.deep.include.members([['channel', 1], ['error', 1], ['done', 1]]);
  });

  it('every channel failing before the stream began is the pre-stream 502: timed out when each timed out', async () => {
    const timingOut = streamOf(referenceOf({ tokens: [ETH, USDC], channels: [channel(1, 'cn')] }), [adapter('cn', 'silent')], { upstreamTimeoutMs: 1_000 });
    const timedOut = recordingResponse();
    const running = timingOut.stream.run(await planOf(timingOut.stream, request()), null, timedOut.res);
    await timingOut.clock.advance(1_000);
    await running;
    expect(timedOut.sent).to.deep.equal(['502 quote service timed out']);

    const failing = streamOf(referenceOf({ tokens: [ETH, USDC], channels: [channel(1, 'cn')] }), [adapter('cn', { error: new ProviderError('cn', 'unavailable', 503) })]);
    const refused = recordingResponse();
    await failing.stream.run(await planOf(failing.stream, request()), null, refused.res);
    expect(refused.sent).to.deep.equal(['502 quote service unavailable']);
  });

  it('a quiet stream begins after the heartbeat period, gets heartbeats, and a channel past the upstream timeout is an error event', async () => {
    const { stream, clock } = streamOf(referenceOf({ tokens: [ETH, USDC], channels: [channel(1, 'cn')] }), [adapter('cn', 'silent')]);
    const out = recordingResponse();
    const running = stream.run(await planOf(stream, request()), null, out.res);
    await clock.advance(14_999);
    expect(out.sent).to.deep.equal([]);
    await clock.advance(1);
    expect(out.sent, 'the head flushed at 15 s, no event to carry it').to.deep.equal(['open, flushed']);
    await clock.advance(45_000);
    await running;
    // heartbeats at 30 s and 45 s; at 60 s the upstream timeout (set first) ends the stream before a third
    expect(out.sent.slice(1)).to.deep.equal([
      ': heartbeat\n\n',
      ': heartbeat\n\n',
      'event: error\ndata: {"channel_id":1,"msg":"quote service timed out"}\n\n',
      'event: done\ndata: {}\n\n',
      'end',
    ]);
  });

  it('a client that leaves aborts the channel calls and gets nothing more', async () => {
    const silent = adapter('cn', 'silent');
    const { stream, clock } = streamOf(referenceOf({ tokens: [ETH, USDC], channels: [channel(1, 'cn')] }), [silent]);
    const out = recordingResponse();
    const running = stream.run(await planOf(stream, request()), null, out.res);
    await clock.advance(1_000);
    out.close();
    await running;
    expect(silent.asked[0].signal.aborted).to.equal(true);
    expect(out.sent).to.deep.equal([]);
    expect(clock.pendingTimers, 'no timer left behind').to.equal(0);
  });
});

describe('channelQuoteEvent (one channel quote, pure)', () => {
  it('takes a promo off the channel fee and has no USD figure without a price', () => {
    const event = channelQuoteEvent({
      channel: { id: 3, name: 'c', icon_url: 'https://icon', adapter_kind: 'cn', base_fee_pct: '0.5' },
      dst: USDC, amountIn: 1_000_000n, amountOut: 2_000_000n, discountPct: 50, commission: 0n, dstUsdPrice: undefined,
    });
    // half of 0.5 %: 0.25 % of the source (2,500 of 1,000,000) is the fee, so 99.75 % of the provider's 2,000,000
    expect(event).to.deep.equal({
      channel_id: 3, name: 'c', symbol: 'USDC', channel_icon: 'https://icon', estimated_out_str: '1995000', estimated_out_usd: '', channel_fee: 0.25, channel_fee_original: 0.5, promo_applied: true, discount_pct: 50,
    });
  });
});
