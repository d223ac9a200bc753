import { providerNamesByReferenceId } from '@chainpipe/chains';
import { belowProviderMinimum, type ChannelOutcome } from '@chainpipe/orders';
import { providerJson, providerJsonArray } from './provider-http';
import { AmountBelowProviderMinimum, ProviderError, type ChannelAdapter, type ProviderDeposit, type ProviderQuote, type ProviderQuoteRequest, type TokenRef } from './adapter';

/**
 * THORChain through a THORNode (https://dev.thorchain.org/swap-guide/quickstart-guide.html):
 * `GET /thorchain/quote/swap?from_asset&to_asset&amount&destination` answers the vault's
 * `inbound_address`, the `memo` the deposit must carry, `expiry` (Unix seconds) and
 * `expected_amount_out`; amounts are 1e8 units for every asset. `GET /thorchain/tx/status/{hash}`
 * follows a swap by the hash of its inbound (deposit) transaction: an outbound whose memo starts
 * with `OUT:` delivered the swap, `REFUND:` returned the principal.
 */
export interface ThorchainConfig {
  baseUrl: string;
  /** Sent as `x-client-id` (Nine Realms asks integrators for one); optional. */
  clientId: string;
  timeoutMs: number;
}

/** THORChain chain prefixes of the price reference's chains (internal chain id → chain), from the chain catalog. */
const CHAINS = providerNamesByReferenceId('thorchain');
const THOR_DECIMALS = 8;

/** `ETH.ETH`, `ETH.USDT-0XDAC17F958D2EE523A2206206994597C13D831EC7`, `BTC.BTC`. */
export function thorAsset(t: TokenRef): string {
  const chain = CHAINS.get(t.chainId);
  if (!chain) throw new ProviderError('thorchain', `no THORChain chain for chain ${t.chainId}`);
  const symbol = t.symbol.toUpperCase();
  return t.contractAddress ? `${chain}.${symbol}-${t.contractAddress.toUpperCase()}` : `${chain}.${symbol}`;
}

/** Between a token's smallest unit and THORChain's 1e8 units, rounded down. */
export function toThorUnits(amount: bigint, decimals: number): bigint {
  return decimals >= THOR_DECIMALS ? amount / 10n ** BigInt(decimals - THOR_DECIMALS) : amount * 10n ** BigInt(THOR_DECIMALS - decimals);
}

/** From THORChain's 1e8 units to a token's smallest unit, rounded down unless asked up. */
export function fromThorUnits(amount: bigint, decimals: number, rounding: 'down' | 'up' = 'down'): bigint {
  if (decimals >= THOR_DECIMALS) return amount * 10n ** BigInt(decimals - THOR_DECIMALS);
  const unit = 10n ** BigInt(THOR_DECIMALS - decimals);
  return rounding === 'up' ? (amount + unit - 1n) / unit : amount / unit;
}

/** A minimum in 1e8 units as the smallest unit of a token, rounded up (sending it is enough). */
export function minFromThorUnits(amount: bigint, decimals: number): bigint {
  return fromThorUnits(amount, decimals, 'up');
}

/** THORNode's refusals of a too small amount (the minimum, in 1e8 units, is in the text of the first). */
const TOO_SMALL = /amount less than (?:min swap amount|dust threshold)/i;
const MIN_IN_TEXT = /recommended_min_amount_in: ?([0-9]+)/i;

export class ThorchainAdapter implements ChannelAdapter {
  readonly kind = 'thorchain';

  constructor(private readonly config: ThorchainConfig) {}

  private request(path: string, query: Record<string, string>, signal: AbortSignal | undefined, timeoutMs: number) {
    const headers: Record<string, string> = this.config.clientId ? { 'x-client-id': this.config.clientId } : {};
    return { baseUrl: this.config.baseUrl, path, query, headers, timeoutMs, signal };
  }

  private get(path: string, query: Record<string, string>, signal?: AbortSignal, timeoutMs = this.config.timeoutMs): Promise<Record<string, unknown>> {
    return providerJson('thorchain', this.request(path, query, signal, timeoutMs));
  }

  private async swapQuote(src: TokenRef, dst: TokenRef, amountIn: bigint, destination: string | undefined, signal?: AbortSignal, timeoutMs?: number) {
    const query: Record<string, string> = { from_asset: thorAsset(src), to_asset: thorAsset(dst), amount: toThorUnits(amountIn, src.decimals).toString() };
    if (destination) query.destination = destination;
    let q: Record<string, unknown>;
    try {
      q = await this.get('/thorchain/quote/swap', query, signal, timeoutMs);
    } catch (err) {
      if (!(err instanceof ProviderError) || err.kind !== 'http' || !TOO_SMALL.test(err.message)) throw err;
      const min = MIN_IN_TEXT.exec(err.message)?.[1];
      throw new AmountBelowProviderMinimum('thorchain', min === undefined ? undefined : minFromThorUnits(BigInt(min), src.decimals), err.status);
    }
    // a quote of an amount under the recommended minimum is one THORChain may refund for want of fees
    const recommended = q.recommended_min_amount_in;
    if (typeof recommended === 'string' && /^[0-9]+$/.test(recommended)) {
      const min = minFromThorUnits(BigInt(recommended), src.decimals);
      if (belowProviderMinimum(amountIn, min)) throw new AmountBelowProviderMinimum('thorchain', min);
    }
    const out = q.expected_amount_out;
    if (typeof out !== 'string' || !/^[0-9]+$/.test(out)) throw new ProviderError('thorchain', 'quote without expected_amount_out');
    return { q, amountOut: fromThorUnits(BigInt(out), dst.decimals) };
  }

  async quote(req: ProviderQuoteRequest): Promise<ProviderQuote> {
    return { amountOut: (await this.swapQuote(req.src, req.dst, req.amountIn, undefined, req.signal, req.timeoutMs)).amountOut };
  }

  async createDeposit(req: { src: TokenRef; dst: TokenRef; amountIn: bigint; dstAddress: string; signal?: AbortSignal }): Promise<ProviderDeposit> {
    const { q, amountOut } = await this.swapQuote(req.src, req.dst, req.amountIn, req.dstAddress, req.signal);
    const { inbound_address: inbound, memo, expiry, router } = q as { inbound_address?: unknown; memo?: unknown; expiry?: unknown; router?: unknown };
    if (typeof inbound !== 'string' || typeof memo !== 'string' || typeof expiry !== 'number') throw new ProviderError('thorchain', 'quote without inbound_address, memo or expiry');
    // EVM sources: tokens reach the vault only through the router's depositWithExpiry (THORNode's notes)
    if (req.src.contractAddress && typeof router !== 'string') throw new ProviderError('thorchain', 'quote of a token source without router');
    // THORChain has no order: the memo is what names this swap until its deposit has a hash
    return {
      depositAddress: inbound, memo, ...(typeof router === 'string' ? { router } : {}), expireAt: new Date(expiry * 1000), providerOrderId: memo, estimatedOut: amountOut,
    };
  }

  /**
   * Where a deposit to THORChain on `chainId` goes now: the chain's vault (and its router for EVM
   * chains) from `/thorchain/inbound_addresses`. Read fresh for every forward, never cached:
   * vaults rotate, and a deposit to a retired one is lost. A halted chain, paused trading or a
   * chain THORNode does not list is refused (ProviderError), so nothing is sent to it.
   */
  async inboundAddress(chainId: number, signal?: AbortSignal): Promise<{ address: string; router?: string }> {
    const chain = CHAINS.get(chainId);
    if (!chain) throw new ProviderError('thorchain', `no THORChain chain for chain ${chainId}`);
    const list = await providerJsonArray('thorchain', this.request('/thorchain/inbound_addresses', {}, signal, this.config.timeoutMs));
    const entry = (list as (Record<string, unknown> | null)[]).find((e) => e?.chain === chain);
    if (!entry || typeof entry.address !== 'string' || entry.address === '') throw new ProviderError('thorchain', `inbound_addresses lists no vault of ${chain}`);
    if (entry.halted === true || entry.global_trading_paused === true || entry.chain_trading_paused === true) throw new ProviderError('thorchain', `${chain} is halted or its trading paused`);
    return { address: entry.address, ...(typeof entry.router === 'string' ? { router: entry.router } : {}) };
  }

  async status(_providerOrderId: string, signal?: AbortSignal, ctx?: { depositTxHash?: string | null }): Promise<{ outcome: 'pending' | ChannelOutcome; txHash?: string }> {
    const hash = ctx?.depositTxHash?.replace(/^0x/i, '').toUpperCase();
    if (!hash) return { outcome: 'pending' };
    const s = await this.get(`/thorchain/tx/status/${hash}`, {}, signal);
    const outs = Array.isArray(s.out_txs) ? (s.out_txs as { id?: string; memo?: string }[]) : [];
    const finalised = (s.stages as { swap_finalised?: { completed?: boolean } } | undefined)?.swap_finalised?.completed === true;
    const out = outs.find((o) => typeof o.memo === 'string');
    if (!finalised || !out) return { outcome: 'pending' };
    if (out.memo!.toUpperCase().startsWith('REFUND:')) return { outcome: 'Refunded', txHash: out.id };
    if (out.memo!.toUpperCase().startsWith('OUT:')) return { outcome: 'Completed', txHash: out.id };
    return { outcome: 'pending' };
  }
}
