import { CHAINS, canonicalAddress, networkByChain, type ChainType } from '@chainpipe/chains';

/**
 * Requests of the pool trades endpoints (docs/decisions.md#d17: registration with `chainType`, `chainId`,
 * `poolAddress`; the trades query takes `chainType`/`chain_type`, `chainId`/`chain_id`, `limit`
 * 1–100, default 100). Pure.
 */
export interface PoolRef {
  chainType: ChainType;
  chainId: number;
  /** Stored (canonical) form. */
  pool: string;
}

export type PoolParse<T> = { ok: true; value: T } | { ok: false; error: string };

const first = (a: unknown, b: unknown): unknown => (a !== undefined && a !== null && a !== '' ? a : b);

export function parsePoolRef(input: { chainType?: unknown; chain_type?: unknown; chainId?: unknown; chain_id?: unknown }, poolAddress: unknown): PoolParse<PoolRef> {
  const rawChain = first(input.chainType, input.chain_type);
  const rawId = first(input.chainId, input.chain_id);
  if (typeof rawChain !== 'string' || rawChain.trim() === '') return { ok: false, error: 'chainType is required' };
  const chainType = rawChain.trim().toLowerCase();
  if (!(chainType in CHAINS)) return { ok: false, error: `unknown chainType ${rawChain.slice(0, 40)}` };
  const id = typeof rawId === 'string' && /^\d{1,12}$/.test(rawId) ? Number(rawId) : rawId;
  if (typeof id !== 'number' || !Number.isSafeInteger(id)) return { ok: false, error: 'chainId is required and must be an integer' };
  const network = networkByChain(chainType, id);
  if (!network) return { ok: false, error: `chainType ${chainType} with chainId ${id} is not a supported network` };
  if (typeof poolAddress !== 'string') return { ok: false, error: 'poolAddress is required' };
  const address = canonicalAddress(network.family, poolAddress);
  if (!address.ok) return { ok: false, error: `poolAddress ${address.reason}` };
  return { ok: true, value: { chainType: network.chainType, chainId: network.chainId, pool: address.address } };
}

export const POOL_TRADES_DEFAULT_LIMIT = 100;

export function parseTradesLimit(raw: unknown): PoolParse<number> {
  if (raw === undefined || raw === '') return { ok: true, value: POOL_TRADES_DEFAULT_LIMIT };
  const n = typeof raw === 'string' && /^\d{1,4}$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isInteger(n) || n < 1 || n > 100) return { ok: false, error: 'limit must be an integer from 1 to 100' };
  return { ok: true, value: n };
}
