import type { ChannelOutcome } from './state-machine';

/**
 * The execution's decisions (the forward of a paid order to its channel), without I/O: what is
 * forwarded, and whether a fresh quote for it still honours the integrator's minimum.
 */

/**
 * What the platform forwards to the channel: the received amount less `fee_platform` and
 * `fee_integrator`, both of which stay at the deposit address until a sweep (source units).
 * Never negative.
 */
export function netToForward(received: bigint, feePlatform: bigint, feeIntegrator: bigint): bigint {
  const net = received - feePlatform - feeIntegrator;
  return net > 0n ? net : 0n;
}

export interface ForwardFacts {
  /** What the deposit paid (source units). */
  received: bigint;
  feePlatform: bigint;
  feeIntegrator: bigint;
  /** The order's `min_acceptable_out_amount` (destination units). */
  minAcceptableOut: bigint;
}

export type ForwardDecision =
  /** Forward `net`; the channel must deliver at least `minOut` (THORChain's memo limit, ChangeNOW's fixed rate). */
  | { kind: 'forward'; net: bigint; minOut: bigint }
  /** The fresh quote for `net` is below the minimum: no forward, the order is `SlippageFailed` (refundable). */
  | { kind: 'slippage_failed'; net: bigint; quotedOut: bigint; minOut: bigint }
  /** The fees take everything received: nothing to forward (a person decides). */
  | { kind: 'nothing_to_forward'; net: bigint };

/** Whether to forward a paid order, given a fresh quote's output for the net amount. */
export function decideForward(facts: ForwardFacts, quotedOutForNet: bigint): ForwardDecision {
  const net = netToForward(facts.received, facts.feePlatform, facts.feeIntegrator);
  if (net === 0n) return { kind: 'nothing_to_forward', net };
  if (quotedOutForNet < facts.minAcceptableOut) return { kind: 'slippage_failed', net, quotedOut: quotedOutForNet, minOut: facts.minAcceptableOut };
  return { kind: 'forward', net, minOut: facts.minAcceptableOut };
}

/**
 * A THORChain swap memo with its output limit, `=:ASSET:DEST:LIMIT`: LIMIT is the minimum output
 * in THORChain's 1e8 units, converted from the destination token's smallest unit and rounded
 * up, so that THORChain refunds rather than deliver less than the minimum. A source chain that
 * carries the memo in little room (Bitcoin's OP_RETURN: 80 bytes, `THORCHAIN_MEMO_MAX_BYTES`) gets
 * the token's contract cut to its last three characters (`ETH.USDT-EC7`), the abbreviation
 * THORChain's fuzzy asset matching resolves against its pools; a memo that still does not fit
 * is refused (the forward fails rather than send a memo THORChain would refund).
 */
export function thorchainLimitMemo(toAsset: string, destination: string, minOut: bigint, dstDecimals: number, maxBytes = Number.POSITIVE_INFINITY): string {
  if (minOut < 0n) throw new RangeError('a negative minimum output');
  if (!Number.isInteger(dstDecimals) || dstDecimals < 0) throw new RangeError(`not a decimals count: ${dstDecimals}`);
  let limit: bigint;
  if (dstDecimals <= 8) limit = minOut * 10n ** BigInt(8 - dstDecimals);
  else {
    const unit = 10n ** BigInt(dstDecimals - 8);
    limit = (minOut + unit - 1n) / unit;
  }
  const memo = `=:${toAsset}:${destination}:${limit}`;
  if (Buffer.byteLength(memo) <= maxBytes) return memo;
  const [asset, contract] = toAsset.split('-');
  const short = contract && contract.length > 3 ? `=:${asset}-${contract.slice(-3)}:${destination}:${limit}` : memo;
  if (Buffer.byteLength(short) > maxBytes) throw new RangeError(`a THORChain memo of ${Buffer.byteLength(short)} bytes does not fit the source chain's ${maxBytes}`);
  return short;
}

/** Room for a THORChain memo on source chains that limit it, by THORChain chain (UTXO chains: an OP_RETURN output). */
export const THORCHAIN_MEMO_MAX_BYTES: Readonly<Record<string, number>> = { BTC: 80, LTC: 80, BCH: 80, DOGE: 80 };

/**
 * What a channel's reported outcome makes of the order. A provider refunds the sender of a swap:
 * for an order the platform forwarded (paid to its own deposit address) that is the deposit
 * address, not the user. The swap failed and the principal is back with the platform, so the
 * order is `ChainFailed` (refundable: the refund to the user's address is the platform's to
 * send), never `Refunded`. Orders paid to the channel directly keep the channel's word.
 */
export function outcomeForOrder(outcome: ChannelOutcome, forwardedByPlatform: boolean): ChannelOutcome {
  return outcome === 'Refunded' && forwardedByPlatform ? 'ChainFailed' : outcome;
}
