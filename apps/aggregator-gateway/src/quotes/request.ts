/**
 * The quote stream's parameters (GET query or POST body), checked with the spec's messages before
 * the stream starts. Pure.
 */
export interface QuoteRequest {
  srcTokenId: number;
  dstTokenId: number;
  amountIn: bigint;
  slippage: number;
  promoCode: string | null;
  channelId: number | null;
}

export type Parsed = { ok: true; value: QuoteRequest } | { ok: false; msg: string };

const absent = (v: unknown) => v === undefined || v === null || v === '';
const id = (v: unknown): number | null => {
  const s = typeof v === 'number' ? String(v) : typeof v === 'string' ? v.trim() : '';
  return /^[1-9][0-9]{0,9}$/.test(s) && Number(s) <= 2147483647 ? Number(s) : null;
};

export function parseQuoteRequest(raw: Record<string, unknown>): Parsed {
  if (absent(raw.src_token_id) || absent(raw.dst_token_id)) return { ok: false, msg: 'src_token_id/dst_token_id required' };
  if (absent(raw.amount_in)) return { ok: false, msg: 'amount_in required' };
  if (absent(raw.slippage)) return { ok: false, msg: 'slippage required' };
  const src = id(raw.src_token_id);
  const dst = id(raw.dst_token_id);
  if (src === null || dst === null) return { ok: false, msg: 'src_token_id/dst_token_id must be integers' };
  const amount = String(raw.amount_in).trim();
  if (!/^[0-9]{1,78}$/.test(amount) || BigInt(amount) === 0n) return { ok: false, msg: 'amount_in must be a positive integer string' };
  const slippage = typeof raw.slippage === 'number' ? raw.slippage : /^[0-9.eE+-]{1,30}$/.test(String(raw.slippage).trim()) ? Number(raw.slippage) : NaN;
  if (!(slippage > 0 && slippage < 1)) return { ok: false, msg: 'slippage out of range' };
  let channelId: number | null = null;
  if (!absent(raw.channel_id)) {
    channelId = id(raw.channel_id);
    if (channelId === null) return { ok: false, msg: 'channel not found' };
  }
  const promo = typeof raw.promo_code === 'string' && raw.promo_code.trim() !== '' ? raw.promo_code.trim() : null;
  return { ok: true, value: { srcTokenId: src, dstTokenId: dst, amountIn: BigInt(amount), slippage, promoCode: promo, channelId } };
}

/** One SSE event: `event: <name>` then `data: <json>` and a blank line. */
export function sseEvent(name: string, data: unknown): string {
  return `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
}
