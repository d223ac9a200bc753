import type { ChannelOutcome } from '@chainpipe/orders';
import type { UpstreamErrorKind } from '@chainpipe/upstreams';

/** A token as the channels need it (from the price reference: `price.tokens` joined with its chain). */
export interface TokenRef {
  /** Token id of the price service. */
  id: number;
  symbol: string;
  decimals: number;
  /** Internal chain id of the price service (1 Ethereum, 8 Solana, 10 Bitcoin…). */
  chainId: number;
  /** Contract or mint; null for a native coin. */
  contractAddress: string | null;
}

/** The channels' view of a price reference token row. */
export function tokenRefOf(t: { id: number; symbol: string; decimals: number; chain_id: number; contract_address: string | null }): TokenRef {
  return { id: t.id, symbol: t.symbol, decimals: t.decimals, chainId: t.chain_id, contractAddress: t.contract_address };
}

export interface ProviderQuoteRequest {
  src: TokenRef;
  dst: TokenRef;
  amountIn: bigint;
  signal: AbortSignal;
  timeoutMs?: number;
}

export interface ProviderQuote {
  /** What the provider says the destination receives, smallest unit, after its own fees. */
  amountOut: bigint;
  /** Provider's rate id or similar, when it has one. */
  rateId?: string;
}

export interface ProviderDeposit {
  depositAddress: string;
  memo?: string;
  /**
   * The contract a token deposit must go through (THORChain's router for ERC-20 sources:
   * `depositWithExpiry(vault, asset, amount, memo, expiry)`); absent when a plain transfer to
   * `depositAddress` is the deposit.
   */
  router?: string;
  expireAt: Date;
  providerOrderId: string;
  estimatedOut: bigint;
}

/**
 * One swap provider behind a channel. Amounts are integers in the smallest unit; adapters convert
 * to and from the provider's own notation without floats.
 */
export interface ChannelAdapter {
  readonly kind: string;
  /**
   * `timeoutMs`: the caller's deadline for this quote instead of the provider's per-call timeout
   * (the quote stream's upstream timeout, 60 s by default in the spec).
   */
  quote(req: ProviderQuoteRequest): Promise<ProviderQuote>;
  createDeposit(req: { src: TokenRef; dst: TokenRef; amountIn: bigint; dstAddress: string; refundAddress?: string; signal?: AbortSignal }): Promise<ProviderDeposit>;
  /**
   * `ctx.depositTxHash`: the transaction that paid the provider, for providers that follow swaps
   * by it (THORChain): the platform's forward of an order paid to its own deposit address.
   */
  status(providerOrderId: string, signal?: AbortSignal, ctx?: { depositTxHash?: string | null }): Promise<{ outcome: 'pending' | ChannelOutcome; txHash?: string }>;
}

/**
 * The provider failed: answered with an error or something unreadable, or (with `kind`, for a
 * call of the provider's HTTP API) did not answer in time or could not be reached.
 */
export class ProviderError extends Error {
  readonly kind?: UpstreamErrorKind;

  constructor(
    readonly provider: string,
    message: string,
    readonly status?: number,
    options: { kind?: UpstreamErrorKind; cause?: unknown } = {},
  ) {
    super(`${provider}: ${message}`, options.cause === undefined ? undefined : { cause: options.cause });
    this.kind = options.kind;
  }
}

/**
 * The provider refuses the amount as too small: THORNode's `amount less than min swap amount
 * (recommended_min_amount_in: …)` or a quote below its `recommended_min_amount_in`, ChangeNOW's
 * `deposit_too_small` below the minimum of its range. `minAmountIn` is the provider's minimum in
 * the smallest unit of the source token (rounded up), when it said one.
 */
export class AmountBelowProviderMinimum extends ProviderError {
  constructor(
    provider: string,
    readonly minAmountIn: bigint | undefined,
    status?: number,
  ) {
    super(provider, minAmountIn === undefined ? 'amount below the provider minimum' : `amount below the provider minimum of ${minAmountIn}`, status);
  }
}
