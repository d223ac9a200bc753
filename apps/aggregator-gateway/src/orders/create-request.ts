import { randomBytes } from 'node:crypto';
import type { HttpAggIntegratorOrderCreate } from '@chainpipe/contracts';
import { minOutForSlippage } from '@chainpipe/orders';

/**
 * `POST /api/v1/integrator/orders` before any I/O: the spec's error rows that the body alone
 * decides, in the order the table lists them. `precheck` runs before the JSON Schema (so a
 * missing field gets the spec's text, not the schema's), `checkRules` after it.
 */
export type CreateBody = HttpAggIntegratorOrderCreate;
export type Check = { ok: true } | { ok: false; msg: string };

const OK: Check = { ok: true };
const fail = (msg: string): Check => ({ ok: false, msg });

export const MSG = {
  invalidBody: 'invalid request body',
  tokenIdsRequired: 'src_token_id/dst_token_id required',
  tokenNotFound: 'token not found',
  chainNotFound: 'chain not found',
  channelNotFound: 'channel not found',
  dstAddressInvalid: 'dst_address invalid',
  chosenNotInChannels: 'chosen_channel_id not in channels',
  slippageOutOfRange: 'slippage out of range',
  minOutTooLow: 'min_acceptable_out_amount too low',
  /** Not a row of the spec's table: an order that could only end in SlippageFailed (docs/decisions.md#d160). */
  minOutAboveEstimate: 'min_acceptable_out_amount above the estimate after commission',
  quoteMismatch: 'quote amount mismatch',
  amountBelowMinimum: 'amount_in below minimum',
  duplicateClientOrderId: 'duplicate client_order_id',
  splitNotSupported: 'split orders are not supported for integrator orders',
} as const;

/** Required fields after the token ids, in the spec's order; each missing one is `<field> required`. */
const REQUIRED = ['amount_in', 'dst_address', 'chosen_channel_id', 'slippage', 'main_channel_estimated_out_amount', 'min_acceptable_out_amount', 'channels'] as const;

const absent = (v: unknown) => v === undefined || v === null || v === '';

export function precheck(body: unknown): Check {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return fail(MSG.invalidBody);
  const b = body as Record<string, unknown>;
  if (absent(b.src_token_id) || absent(b.dst_token_id)) return fail(MSG.tokenIdsRequired);
  for (const f of REQUIRED) if (absent(b[f])) return fail(`${f} required`);
  // integrator orders are single-channel: a split or risk-flagged payload is refused as such
  if ((typeof b.split_count === 'number' && b.split_count >= 2) || b.is_risk === true) return fail(MSG.splitNotSupported);
  return OK;
}

/** Rules on a body that passed its schema. */
export function checkRules(b: CreateBody): Check {
  if (!(b.slippage > 0 && b.slippage < 1)) return fail(MSG.slippageOutOfRange);
  if (!b.channels.some((c) => c.channel_id === b.chosen_channel_id)) return fail(MSG.chosenNotInChannels);
  const floor = minOutForSlippage(BigInt(b.main_channel_estimated_out_amount), b.slippage);
  const min = BigInt(b.min_acceptable_out_amount);
  // the platform's minimum output: what the declared slippage allows from the chosen estimate
  if (min <= 0n || min < floor) return fail(MSG.minOutTooLow);
  return OK;
}

/** A platform order number: time-ordered and unguessable (`AO` + UTC date-time + 10 hex digits). */
export function newOrderNo(now: Date): string {
  const stamp = now.toISOString().replace(/[-:TZ.]/g, '').slice(0, 14);
  return `AO${stamp}${randomBytes(5).toString('hex')}`;
}
