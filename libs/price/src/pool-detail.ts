/**
 * Pool detail of the price API (spec, "Pool detail") from a GeckoTerminal
 * `/networks/{network}/pools/{address}?include=base_token,quote_token,dex` answer (JSON:API:
 * `data.attributes`, `data.relationships`, `included`). Windows the upstream left out are "0"
 * (volumes, changes) or 0 (transactions); token fields it left out are empty strings.
 */

type Json = any;

export const POOL_WINDOWS = ['m5', 'm15', 'm30', 'h1', 'h6', 'h24'] as const;

export interface PoolToken {
  address: string;
  name: string;
  symbol: string;
  image_url: string;
}

export interface PoolDetail {
  id: string;
  name: string;
  address: string;
  network: string;
  dex: string;
  pool_created_at: string;
  base_token: PoolToken;
  quote_token: PoolToken;
  base_token_price_usd: string;
  quote_token_price_usd: string;
  fdv_usd: string | null;
  market_cap_usd: string | null;
  price_change_percentage: Record<string, string>;
  volume_usd: Record<string, string>;
  reserve_in_usd: string;
  transactions: Record<string, { buys: number; sells: number; buyers: number; sellers: number }>;
}

const s = (v: unknown, fallback = ''): string => (typeof v === 'string' ? v : typeof v === 'number' && Number.isFinite(v) ? String(v) : fallback);
const orNull = (v: unknown): string | null => (v === null || v === undefined ? null : s(v, '') || null);
const int = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? Math.trunc(v) : typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : 0);

function token(ref: Json, included: Json[]): PoolToken {
  const id = ref?.data?.id;
  const attrs = included.find((i) => i?.id === id && i?.type === 'token')?.attributes ?? {};
  return { address: s(attrs.address), name: s(attrs.name), symbol: s(attrs.symbol), image_url: s(attrs.image_url) };
}

function windows(src: Json): Record<string, string> {
  const out: Record<string, string> = {};
  for (const w of POOL_WINDOWS) out[w] = s(src?.[w], '0');
  return out;
}

/** Maps an upstream answer; throws when it has no pool in it (an upstream fault, not a missing pool). */
export function mapPoolDetail(network: string, answer: Json): PoolDetail {
  const pool = answer?.data;
  const a = pool?.attributes;
  if (!a || typeof a !== 'object' || typeof a.address !== 'string') throw new Error('upstream answer has no pool');
  const included: Json[] = Array.isArray(answer.included) ? answer.included : [];
  const rel = pool.relationships ?? {};
  const tx: PoolDetail['transactions'] = {};
  for (const w of POOL_WINDOWS) {
    const t = a.transactions?.[w] ?? {};
    tx[w] = { buys: int(t.buys), sells: int(t.sells), buyers: int(t.buyers), sellers: int(t.sellers) };
  }
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
