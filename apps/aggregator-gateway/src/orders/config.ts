import { int, str } from '@chainpipe/runtime';

/** Settings of the integrator order endpoints (spread into the gateway's config). */
export const orderConfig = {
  ORDER_MIN_AMOUNT_USD: str({ default: '10', doc: 'minimum order: the source amount must be worth this many USD at the latest price (docs/decisions.md#d20)' }),
  ORDER_QUOTE_DEVIATION_BP: int({ default: 100, min: 0, max: 10_000, doc: 'largest accepted difference between the submitted estimate and the re-quote, in basis points (100 = 1 %)' }),
  ORDER_AUTO_CANCEL_WINDOW_MS: int({ default: 24 * 3600_000, min: 1000, doc: 'auto_cancel_at = expire_at + this window (refund requests of unpaid orders end there)' }),
  ORDER_UPSTREAM_TIMEOUT_MS: int({ default: 5000, min: 100, doc: 'each channel call of an order creation (re-quote, deposit); both fit the request deadline' }),
  ORDER_PRICE_MAX_AGE_MS: int({ default: 600_000, min: 1000, doc: 'a source-token price older than this is not used (the order is refused with 503)' }),
  ORDER_DEPOSIT_APP_ID: str({ default: 'aggregator-deposits', doc: 'internal application of the address monitoring service whose monitored addresses are the deposit addresses (shared with order-tracker)' }),
};
