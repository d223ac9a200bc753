import type { HttpPricePoolDetail } from '@chainpipe/contracts';
/**
 * Pool detail of the price API (spec, "Pool detail") from a GeckoTerminal
 * `/networks/{network}/pools/{address}?include=base_token,quote_token,dex` answer (JSON:API:
 * `data.attributes`, `data.relationships`, `included`). Windows the upstream left out are "0"
 * (volumes, changes) or 0 (transactions); token fields it left out are empty strings.
 */

type Json = any;

export const POOL_WINDOWS = ['m5', 'm15', 'm30', 'h1', 'h6', 'h24'] as const;

/** The pool detail of the price API: the schema's (`http/price/pool-detail`). */
export type PoolDetail = NonNullable<HttpPricePoolDetail>;
export type PoolToken = PoolDetail['base_token'];

const s = (v: unknown, fallback = ''): string => (typeof v === 'string' ? v : typeof v === 'number' && Number.isFinite(v) ? String(v) : fallback);
const orNull = (v: unknown): string | null => (v === null || v === undefined ? null : s(v, '') || null);
const int = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? Math.trunc(v) : typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : 0);

function token(ref: Json, included: Json[]): PoolToken {
  const id = ref?.data?.id;
  const attrs = included.find((i) => i?.id === id && i?.type === 'token')?.attributes ?? {};
  return { address: s(attrs.address), name: s(attrs.name), symbol: s(attrs.symbol), image_url: s(attrs.image_url) };
}

/** One value per window of the spec (m5 … h24). */
function perWindow<T>(value: (w: (typeof POOL_WINDOWS)[number]) => T): Record<(typeof POOL_WINDOWS)[number], T> {
  return { m5: value('m5'), m15: value('m15'), m30: value('m30'), h1: value('h1'), h6: value('h6'), h24: value('h24') };
}

function windows(src: Json): Record<(typeof POOL_WINDOWS)[number], string> {
  return perWindow((w) => s(src?.[w], '0'));
}

/** Maps an upstream answer; throws when it has no pool in it (an upstream fault, not a missing pool). */
export function mapPoolDetail(network: string, answer: Json): PoolDetail {
  const pool = answer?.data;
  const a = pool?.attributes;
  if (!a || typeof a !== 'object' || typeof a.address !== 'string') throw new Error('upstream answer has no pool');
  const included: Json[] = Array.isArray(answer.included) ? answer.included : [];
  const rel = pool.relationships ?? {};
  const tx = perWindow((w) => {
    const t = a.transactions?.[w] ?? {};
    return { buys: int(t.buys), sells: int(t.sells), buyers: int(t.buyers), sellers: int(t.sellers) };
  });
  return {
    id: s(pool.id, `${network}_${a.address}`),
    name: s(a.name),
    address: a.address,
    network,
    dex: s(rel.dex?.data?.id),
    pool_created_at: s(a.pool_created_at),
    base_token: token(rel.base_token, included),
    quote_token: token(rel.quote_token, included),
    base_token_price_usd: s(a.base_token_price_usd, '0'),
    quote_token_price_usd: s(a.quote_token_price_usd, '0'),
    fdv_usd: orNull(a.fdv_usd),
    market_cap_usd: orNull(a.market_cap_usd),
    price_change_percentage: windows(a.price_change_percentage),
    volume_usd: windows(a.volume_usd),
    reserve_in_usd: s(a.reserve_in_usd, '0'),
    transactions: tx,
  };
}
