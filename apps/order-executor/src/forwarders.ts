import { ProviderError, thorAsset, type ChangeNowAdapter, type ThorchainAdapter, type TokenRef } from '@chainpipe/aggregator';
import { approveCalldata, routerDepositCalldata, transferCalldata, type DepositKeyRef, type OutgoingTransferIntent } from '@chainpipe/custody';
import type { OrderRow } from '@chainpipe/order-store';
import { THORCHAIN_MEMO_MAX_BYTES, thorchainLimitMemo } from '@chainpipe/orders';

/** What a forward is decided on: the paid order, its tokens, the net amount and the minimum the channel must deliver. */
export interface ForwardContext {
  order: OrderRow;
  src: TokenRef;
  dst: TokenRef;
  /** received − fee_platform − fee_integrator (source units). */
  net: bigint;
  /** The order's min_acceptable_out_amount (destination units). */
  minOut: bigint;
  from: DepositKeyRef;
  signal: AbortSignal;
}

/** The channel takes nothing now (a halted chain, paused trading): nothing is sent; the next pass asks again. */
export class ForwardWait extends Error {}

/**
 * How the platform forwards a paid order to a channel of one kind (`agg.channels.adapter_kind`):
 * a fresh quote for the net amount, and the transfers that pay the channel. The executor keeps
 * one per kind; a kind without one is left in `Exchanging`, counted.
 */
export interface ChannelForwarder {
  readonly kind: string;
  /**
   * What the channel would deliver now for `net` (destination units). Throws
   * AmountBelowProviderMinimum below its minimum, ForwardWait when it takes nothing now.
   */
  quote(ctx: Omit<ForwardContext, 'minOut' | 'from'>): Promise<bigint>;
  /**
   * The transfers that forward `net`, in order (the last one is the `forward`, by whose hash the
   * channel is followed; an `approve` may come before it), and the execution details to record.
   */
  plan(ctx: ForwardContext): Promise<{ transfers: Omit<OutgoingTransferIntent, 'orderId' | 'chainType' | 'from'>[]; execution: Record<string, unknown> }>;
}

/**
 * The gas limit of a router deposit (`depositWithExpiry` of an ERC-20: its `transferFrom` and the
 * Deposit event with the memo, some 60–90k gas). It is fixed, not estimated: until the `approve`
 * before it is mined, a node's estimate of the deposit reverts for want of an allowance. Gas not
 * used is not charged; what the top-up sent for it stays at the deposit address.
 */
export const ROUTER_DEPOSIT_GAS_LIMIT = 150_000n;

const halted = (err: unknown) => err instanceof ProviderError && /halted|paused/i.test(err.message);

/**
 * THORChain: the vault of the source chain read fresh from /thorchain/inbound_addresses (never
 * cached: vaults rotate; a halted chain waits), the memo `=:ASSET:DEST:LIMIT` with the order's
 * minimum as the limit (THORChain refunds rather than deliver less). The native coin goes to
 * the vault with the memo (the chain's sender carries it: calldata on EVM chains, an OP_RETURN
 * output on Bitcoin); a token goes through the chain's router:
 * `approve(router, net)`, then `depositWithExpiry(vault, token, net, memo, expiry)`.
 */
export class ThorchainForwarder implements ChannelForwarder {
  readonly kind = 'thorchain';

  constructor(
    private readonly adapter: Pick<ThorchainAdapter, 'quote' | 'inboundAddress'>,
    private readonly opts: { now: () => number; depositExpirySec: number },
  ) {}

  async quote(ctx: Omit<ForwardContext, 'minOut' | 'from'>): Promise<bigint> {
    try {
      return (await this.adapter.quote({ src: ctx.src, dst: ctx.dst, amountIn: ctx.net, signal: ctx.signal })).amountOut;
    } catch (err) {
      // THORNode refuses quotes of a halted chain ("trading is halted")
      throw halted(err) ? new ForwardWait((err as Error).message) : err;
    }
  }

  async plan(ctx: ForwardContext) {
    let inbound: { address: string; router?: string };
    try {
      inbound = await this.adapter.inboundAddress(ctx.src.chainId, ctx.signal);
    } catch (err) {
      throw halted(err) ? new ForwardWait((err as Error).message) : err;
    }
    // UTXO sources carry the memo in an OP_RETURN output (80 bytes): the token named short there
    const memo = thorchainLimitMemo(thorAsset(ctx.dst), ctx.order.dst_address, ctx.minOut, ctx.dst.decimals, THORCHAIN_MEMO_MAX_BYTES[thorAsset(ctx.src).split('.')[0]]);
    const execution: Record<string, unknown> = { channel: 'thorchain', vault: inbound.address, memo };
    const token = ctx.src.contractAddress;
    if (!token) {
      // the source chain's sender carries the memo its way (EVM calldata, a Bitcoin OP_RETURN output)
      return { transfers: [{ kind: 'forward' as const, call: { to: inbound.address, value: ctx.net, memo }, asset: null, amount: ctx.net, detail: execution }], execution };
    }
    if (!inbound.router) throw new Error(`thorchain lists no router for chain ${ctx.src.chainId}: a token cannot be deposited`);
    const expiry = Math.floor(this.opts.now() / 1000) + this.opts.depositExpirySec;
    const detail = { ...execution, router: inbound.router, expiry };
    return {
      transfers: [
        { kind: 'approve' as const, call: { to: token, value: 0n, data: approveCalldata(inbound.router, ctx.net) }, asset: token, amount: ctx.net, detail: { spender: inbound.router } },
        { kind: 'forward' as const, call: { to: inbound.router, value: 0n, data: routerDepositCalldata(inbound.address, token, ctx.net, memo, expiry), gasLimit: ROUTER_DEPOSIT_GAS_LIMIT }, asset: token, amount: ctx.net, detail },
      ],
      execution: detail,
    };
  }
}

/**
 * ChangeNOW on its fixed-rate flow: the fresh quote is a fixed-rate estimate for the net amount;
 * the forward creates an exchange of exactly the net amount with the `rateId` of a new estimate
 * (ChangeNOW delivers that rate's output or refunds), the deposit address as `refundAddress` (a
 * refund comes back to the platform, which refunds the user), and pays its payin address: the
 * native coin by a plain transfer, a token by `transfer(payin, net)`. The exchange created with
 * the order (for `amount_in`, before the fees were known to be received) is left to expire; the
 * tracker follows the forward's exchange (`provider_order_id` in the execution details).
 */
export class ChangeNowForwarder implements ChannelForwarder {
  readonly kind = 'changenow';

  constructor(private readonly adapter: Pick<ChangeNowAdapter, 'quote' | 'createDeposit'>) {}

  async quote(ctx: Omit<ForwardContext, 'minOut' | 'from'>): Promise<bigint> {
    return (await this.adapter.quote({ src: ctx.src, dst: ctx.dst, amountIn: ctx.net, signal: ctx.signal })).amountOut;
  }

  async plan(ctx: ForwardContext) {
    const exchange = await this.adapter.createDeposit({ src: ctx.src, dst: ctx.dst, amountIn: ctx.net, dstAddress: ctx.order.dst_address, refundAddress: ctx.from.address, signal: ctx.signal });
    // the rate fixed now is what ChangeNOW delivers: under the minimum, nothing is sent (the next pass quotes again)
    if (exchange.estimatedOut < ctx.minOut) throw new ForwardWait(`the fixed rate of exchange ${exchange.providerOrderId} gives ${exchange.estimatedOut}, under the minimum ${ctx.minOut}`);
    if (exchange.memo) throw new Error(`changenow exchange ${exchange.providerOrderId} wants a payin extra id, which no sender carries`);
    const execution: Record<string, unknown> = { channel: 'changenow', provider_order_id: exchange.providerOrderId, payin_address: exchange.depositAddress, fixed_out: exchange.estimatedOut.toString(), rate_valid_until: exchange.expireAt.toISOString() };
    const token = ctx.src.contractAddress;
    const call = token ? { to: token, value: 0n, data: transferCalldata(exchange.depositAddress, ctx.net) } : { to: exchange.depositAddress, value: ctx.net };
    return { transfers: [{ kind: 'forward' as const, call, asset: token ?? null, amount: ctx.net, detail: execution }], execution };
  }
}
