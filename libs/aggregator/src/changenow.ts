import { providerNamesByReferenceId } from '@chainpipe/chains';
import { belowProviderMinimum, type ChannelOutcome } from '@chainpipe/orders';
import { type Clock, systemClock } from '@chainpipe/runtime';
import { AmountBelowProviderMinimum, ProviderError, type ChannelAdapter, type ProviderDeposit, type ProviderQuote, type ProviderQuoteRequest, type TokenRef } from './adapter';
import { providerJson } from './provider-http';
import { fromUnits, toUnits } from './units';

/**
 * ChangeNOW API v2 (https://documenter.getpostman.com/view/8180765/SVfTPnM8, "Exchange"):
 * `GET /v2/exchange/estimated-amount`, `POST /v2/exchange`, `GET /v2/exchange/by-id`, key in
 * `x-changenow-api-key`. Currencies are tickers with a network; amounts are decimal numbers in
 * whole tokens, converted here exactly. The fixed-rate flow, direct type (fixed input amount):
 * an exchange is created with the `rateId` of a fixed-rate estimate (`useRateId=true`) before its
 * `validUntil`, so ChangeNOW delivers the estimated amount or refunds; the order's deposit
 * window ends no later than the rate. The refund address is the one the caller knows (the
 * platform's deposit address of the order, which sends the payin), never left empty then.
 */
export interface ChangeNowConfig {
  baseUrl: string;
  apiKey: string;
  timeoutMs: number;
  /** How long ChangeNOW waits for the deposit of a standard-flow exchange (it does not say per exchange). */
  depositWindowMs: number;
  clock?: Pick<Clock, 'now'>;
}

/** ChangeNOW network names of the price reference's chains (internal chain id → network), from the chain catalog. */
const NETWORKS = providerNamesByReferenceId('changenow');

/** A token as ChangeNOW names it: its lowercase ticker and ChangeNOW's network of its chain. */
export function changenowCurrency(t: Pick<TokenRef, 'chainId' | 'symbol'>): { currency: string; network: string } {
  const network = NETWORKS.get(t.chainId);
  if (!network) throw new ProviderError('changenow', `no ChangeNOW network for chain ${t.chainId}`);
  return { currency: t.symbol.toLowerCase(), network };
}

/** Exchange statuses (API v2) → the outcome of the order; the others are still on their way. */
const OUTCOMES: Readonly<Record<string, ChannelOutcome>> = { finished: 'Completed', failed: 'ChainFailed', refunded: 'Refunded' };

export class ChangeNowAdapter implements ChannelAdapter {
  readonly kind = 'changenow';
  private readonly clock: Pick<Clock, 'now'>;

  constructor(private readonly config: ChangeNowConfig) {
    this.clock = config.clock ?? systemClock;
  }

  private currency(t: TokenRef): { currency: string; network: string } {
    return changenowCurrency(t);
  }

  private call(method: 'GET' | 'POST', path: string, query: Record<string, string> | null, body: unknown, signal?: AbortSignal, timeoutMs = this.config.timeoutMs): Promise<Record<string, unknown>> {
    return providerJson('changenow', {
      baseUrl: this.config.baseUrl, path, query: query ?? undefined, method, headers: { 'x-changenow-api-key': this.config.apiKey }, body, timeoutMs, signal,
    });
  }

  /**
   * A refusal of the amount (ChangeNOW answers `deposit_too_small` with HTTP 400 below the
   * minimum of the pair's range): the range says whether the amount was the reason, and the
   * minimum. Other failures are passed on as they are.
   */
  private async tooSmallOr(err: unknown, req: { src: TokenRef; dst: TokenRef; amountIn: bigint; signal?: AbortSignal; timeoutMs?: number }): Promise<never> {
    if (!(err instanceof ProviderError) || err.kind !== 'http' || err.status !== 400) throw err;
    const from = this.currency(req.src);
    const to = this.currency(req.dst);
    let min: bigint | undefined;
    try {
      const range = await this.call(
        'GET',
        '/v2/exchange/range',
        { fromCurrency: from.currency, toCurrency: to.currency, fromNetwork: from.network, toNetwork: to.network, flow: 'fixed-rate' },
        undefined,
        req.signal,
        req.timeoutMs,
      );
      const minAmount = range.minAmount;
      min = typeof minAmount === 'number' || typeof minAmount === 'string' ? toUnits(minAmount, req.src.decimals, 'up') : undefined;
    } catch {
      throw err; // the range did not help: the first failure is the answer
    }
    if (belowProviderMinimum(req.amountIn, min)) throw new AmountBelowProviderMinimum('changenow', min, err.status);
    throw err;
  }

  async quote(req: ProviderQuoteRequest): Promise<ProviderQuote> {
    try {
      return await this.estimate(req);
    } catch (err) {
      return this.tooSmallOr(err, req);
    }
  }

  async createDeposit(req: { src: TokenRef; dst: TokenRef; amountIn: bigint; dstAddress: string; refundAddress?: string; signal?: AbortSignal }): Promise<ProviderDeposit> {
    try {
      return await this.exchange(req);
    } catch (err) {
      return this.tooSmallOr(err, req);
    }
  }

  private async estimate(req: ProviderQuoteRequest, useRateId = false): Promise<ProviderQuote & { validUntil?: Date }> {
    const from = this.currency(req.src);
    const to = this.currency(req.dst);
    const answer = await this.call(
      'GET',
      '/v2/exchange/estimated-amount',
      {
        fromCurrency: from.currency, toCurrency: to.currency, fromNetwork: from.network, toNetwork: to.network,
        fromAmount: fromUnits(req.amountIn, req.src.decimals), flow: 'fixed-rate', type: 'direct', ...(useRateId ? { useRateId: 'true' } : {}),
      },
      undefined,
      req.signal,
      req.timeoutMs,
    );
    const toAmount = answer.toAmount;
    if (typeof toAmount !== 'number' && typeof toAmount !== 'string') throw new ProviderError('changenow', 'estimate without toAmount');
    const validUntil = typeof answer.validUntil === 'string' ? new Date(answer.validUntil) : undefined;
    return {
      amountOut: toUnits(toAmount, req.dst.decimals),
      rateId: typeof answer.rateId === 'string' && answer.rateId !== '' ? answer.rateId : undefined,
      validUntil: validUntil && !Number.isNaN(validUntil.getTime()) ? validUntil : undefined,
    };
  }

  private async exchange(req: { src: TokenRef; dst: TokenRef; amountIn: bigint; dstAddress: string; refundAddress?: string; signal?: AbortSignal }): Promise<ProviderDeposit> {
    const from = this.currency(req.src);
    const to = this.currency(req.dst);
    const rate = await this.estimate({ src: req.src, dst: req.dst, amountIn: req.amountIn, signal: req.signal ?? AbortSignal.timeout(this.config.timeoutMs) }, true);
    if (!rate.rateId || !rate.validUntil) throw new ProviderError('changenow', 'fixed-rate estimate without rateId or validUntil');
    const answer = await this.call(
      'POST',
      '/v2/exchange',
      null,
      {
        fromCurrency: from.currency, toCurrency: to.currency, fromNetwork: from.network, toNetwork: to.network,
        fromAmount: fromUnits(req.amountIn, req.src.decimals), toAmount: '', address: req.dstAddress, extraId: '',
        refundAddress: req.refundAddress ?? '', refundExtraId: '', userId: '', payload: '', contactEmail: '', flow: 'fixed-rate', type: 'direct', rateId: rate.rateId,
      },
      req.signal,
    );
    const { id, payinAddress, payinExtraId, toAmount } = answer as { id?: unknown; payinAddress?: unknown; payinExtraId?: unknown; toAmount?: unknown };
    if (typeof id !== 'string' || typeof payinAddress !== 'string' || (typeof toAmount !== 'number' && typeof toAmount !== 'string')) {
      throw new ProviderError('changenow', 'exchange answer without id, payinAddress or toAmount');
    }
    // the deposit must arrive (and be forwarded) while the fixed rate holds
    const window = this.clock.now() + this.config.depositWindowMs;
    return {
      depositAddress: payinAddress,
      memo: typeof payinExtraId === 'string' && payinExtraId !== '' ? payinExtraId : undefined,
      expireAt: new Date(Math.min(window, rate.validUntil.getTime())),
      providerOrderId: id,
      estimatedOut: toUnits(toAmount, req.dst.decimals),
    };
  }

  async status(providerOrderId: string, signal?: AbortSignal): Promise<{ outcome: 'pending' | ChannelOutcome; txHash?: string }> {
    const answer = await this.call('GET', '/v2/exchange/by-id', { id: providerOrderId }, undefined, signal);
    const status = String(answer.status ?? '');
    const outcome = OUTCOMES[status] ?? 'pending';
    const hash = outcome === 'Refunded' ? answer.refundHash : answer.payoutHash;
    return typeof hash === 'string' && hash ? { outcome, txHash: hash } : { outcome };
  }
}
