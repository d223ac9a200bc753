import { readFileSync } from 'node:fs';
import path from 'node:path';
import { RandomWalk, type WalkDrivers } from './random-walk';

type Json = any;

/**
 * Pool detail as GeckoTerminal answers `GET /api/v2/networks/{network}/pools/{address}`
 * (JSON:API: `data` of type pool with `attributes` and `relationships`, `included` tokens and
 * dex when asked with `include=base_token,quote_token,dex`), from the real payloads in
 * `upstream/` of the fixtures: the CoinGecko OpenAPI example pool (WETH/USDC 0.05% on eth), the
 * 20 top eth pools and the 20 new Solana pools. The list payloads carry fewer time windows than
 * a detail answer; the missing ones are derived from `h1` (shorter windows) and `h24` (`h6`).
 * Prices walk; an unknown pool is a 404 as upstream.
 */
export const POOL_FIXTURES = [
  'coingecko-oas-example.onchain_networks_eth_pools_address.json',
  'geckoterminal.networks_pools_top.json',
  'geckoterminal.networks_solana_new_pools.json',
] as const;

const WINDOWS = ['m5', 'm15', 'm30', 'h1', 'h6', 'h24'] as const;
const SHARE: Record<(typeof WINDOWS)[number], [from: 'h1' | 'h24', share: number]> = {
  m5: ['h1', 1 / 12],
  m15: ['h1', 1 / 4],
  m30: ['h1', 1 / 2],
  h1: ['h1', 1],
  h6: ['h24', 1 / 4],
  h24: ['h24', 1],
};

interface StoredPool {
  pool: Json;
  included: Json[];
}

function fillWindows(attrs: Json): void {
  const num = (v: unknown) => (typeof v === 'string' || typeof v === 'number' ? Number(v) : NaN);
  for (const field of ['price_change_percentage', 'volume_usd'] as const) {
    const src = attrs[field] ?? {};
    const out: Record<string, string> = {};
    for (const w of WINDOWS) {
      const [from, share] = SHARE[w];
      const base = num(src[from]);
      out[w] = src[w] ?? (Number.isFinite(base) ? String(field === 'volume_usd' ? base * share : base * share) : '0');
    }
    attrs[field] = out;
  }
  const tx = attrs.transactions ?? {};
  const outTx: Record<string, Json> = {};
  for (const w of WINDOWS) {
    const [from, share] = SHARE[w];
    const src = tx[w] ?? tx[from] ?? {};
    const scale = tx[w] ? 1 : share;
    const n = (v: unknown) => Math.round((typeof v === 'number' ? v : 0) * scale);
    outTx[w] = { buys: n(src.buys), sells: n(src.sells), buyers: n(src.buyers ?? src.buys), sellers: n(src.sellers ?? src.sells) };
  }
  attrs.transactions = outTx;
}

export class PoolsSource {
  private readonly pools = new Map<string, StoredPool>();
  private readonly walks = new Map<string, RandomWalk>();

  constructor(fixturesDir: string, private readonly drivers: WalkDrivers) {
    for (const file of POOL_FIXTURES) {
      const doc = JSON.parse(readFileSync(path.join(fixturesDir, 'upstream', file), 'utf8'));
      const list: Json[] = Array.isArray(doc.data) ? doc.data : [doc.data];
      const included: Json[] = doc.included ?? [];
      for (const pool of list) {
        const network = String(pool.id).slice(0, String(pool.id).length - String(pool.attributes.address).length - 1);
        // The detail example comes first and wins: the 2023 top-pools list repeats its pool with fewer fields.
        if (this.pools.has(this.key(network, pool.attributes.address))) continue;
        const rel = pool.relationships ?? {};
        const ids = [rel.base_token?.data?.id, rel.quote_token?.data?.id, rel.dex?.data?.id];
        const copy = structuredClone(pool);
        fillWindows(copy.attributes);
        this.pools.set(this.key(network, pool.attributes.address), { pool: copy, included: included.filter((i) => ids.includes(i.id)) });
      }
    }
  }

  private key(network: string, address: string): string {
    return `${network}:${address.toLowerCase()}`;
  }

  get size(): number {
    return this.pools.size;
  }

  /** Network and address of every pool served (for tests and docs/development.md). */
  list(): { network: string; address: string }[] {
    return [...this.pools.keys()].map((k) => {
      const [network, address] = k.split(':');
      return { network, address };
    });
  }

  /** The detail answer, or undefined (upstream's 404). */
  detail(network: string, address: string): Json | undefined {
    const key = this.key(network, address);
    const stored = this.pools.get(key);
    if (!stored) return undefined;
    let walk = this.walks.get(key);
    if (!walk) {
      walk = new RandomWalk(1, { volatility: 0.003, stepMs: 1000, ...this.drivers });
      this.walks.set(key, walk);
    }
    const factor = walk.read().value;
    const pool = structuredClone(stored.pool);
    const moved = (v: unknown) => (typeof v === 'string' && Number.isFinite(Number(v)) ? String(Number((Number(v) * factor).toPrecision(15))) : v);
    pool.attributes.base_token_price_usd = moved(pool.attributes.base_token_price_usd);
    pool.attributes.reserve_in_usd = moved(pool.attributes.reserve_in_usd);
    return { data: pool, included: stored.included };
  }
}
