import { deviatesBeyond, outAfterCommission, type Decimal } from './fees';

/**
 * Decisions of an integrator order creation that need no I/O: what makes two creations the same
 * order, what a repeated `client_order_id` gets, and the minimum order amounts (the platform's in
 * USD, the channel provider's in source units).
 */

/**
 * The order's identity for `client_order_id`: what the order moves, where to, on which channel.
 * Quote figures (estimates, `min_acceptable_out_amount`, slippage) are left out, so a retry with
 * a refreshed quote is the same order.
 */
export interface OrderIdentity {
  srcTokenId: number;
  dstTokenId: number;
  amountIn: bigint;
  /** Canonical form on the destination chain (as stored). */
  dstAddress: string;
  channelId: number;
}

export function sameOrderIdentity(a: OrderIdentity, b: OrderIdentity): boolean {
  return a.srcTokenId === b.srcTokenId && a.dstTokenId === b.dstTokenId && a.amountIn === b.amountIn && a.dstAddress === b.dstAddress && a.channelId === b.channelId;
}

/** A creation whose `client_order_id` the integrator already used: the same order, or the spec's duplicate error. */
export type ClientOrderRepeat = 'existing_order' | 'duplicate_client_order_id';

export function decideClientOrderRepeat(existing: OrderIdentity, requested: OrderIdentity): ClientOrderRepeat {
  return sameOrderIdentity(existing, requested) ? 'existing_order' : 'duplicate_client_order_id';
}

/** The identity as one text (stored as the order's request hash input). */
export function orderIdentityText(i: OrderIdentity): string {
  return JSON.stringify([i.srcTokenId, i.dstTokenId, i.amountIn.toString(), i.dstAddress, i.channelId]);
}

/** Whether `amountIn` (smallest unit, `decimals`) is worth at least `minUsd` at `priceUsd` per whole token. */
export function worthAtLeast(amountIn: bigint, decimals: number, priceUsd: Decimal, minUsd: Decimal): boolean {
  return amountIn * priceUsd.digits * 10n ** BigInt(minUsd.scale) >= minUsd.digits * 10n ** BigInt(decimals + priceUsd.scale);
}

/** Whether the channel provider refuses `amountIn` as too small (`minAmountIn` in source units; none known: not below). */
export function belowProviderMinimum(amountIn: bigint, minAmountIn: bigint | undefined): boolean {
  return minAmountIn !== undefined && amountIn < minAmountIn;
}

/** What the creation's re-quote makes of the submitted figures. */
export type RequoteCheck = { ok: true; estimatedOut: bigint } | { ok: false; msg: 'quote amount mismatch' | 'min_acceptable_out_amount above the estimate after commission' };

/**
 * The creation's re-quote against the submitted figures (docs/decisions.md, "An order must be
 * able to succeed at its own quote"). `requoteOut` is the channel's estimate for `amountIn`
 * (after the platform fee), `commission` the key's share of `amountIn`. The order's own estimate
 * is the re-quote after the commission (`outAfterCommission`): that is what the forward's fresh
 * quote of the net amount gives. The submitted estimate may be either figure, the quote stream
 * showing the one after commission only when given the key: `quote amount mismatch` when it is
 * within `thresholdBp` of neither. A minimum above the order's own estimate could only end in
 * `SlippageFailed` after the user paid: refused.
 */
export function checkRequote(
  submitted: { estimatedOut: bigint; minOut: bigint },
  requoteOut: bigint,
  amountIn: bigint,
  commission: bigint,
  thresholdBp: number,
): RequoteCheck {
  const estimatedOut = outAfterCommission(requoteOut, amountIn, commission);
  if (deviatesBeyond(submitted.estimatedOut, requoteOut, thresholdBp) && deviatesBeyond(submitted.estimatedOut, estimatedOut, thresholdBp)) return { ok: false, msg: 'quote amount mismatch' };
  if (submitted.minOut > estimatedOut) return { ok: false, msg: 'min_acceptable_out_amount above the estimate after commission' };
  return { ok: true, estimatedOut };
}
