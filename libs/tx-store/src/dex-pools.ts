import type { Knex } from '@chainpipe/db';

/** A registered DEX pool: its network and its address in stored (canonical) form. */
export interface DexPoolRef {
  chainType: string;
  chainId: number;
  pool: string;
}

/**
 * tx.dex_pools: the pools whose trades are kept. Global, like the pools themselves; the gateway
 * registers and removes them, the matcher re-reads the (short) list. Both writes are idempotent.
 */
export class DexPoolRepository {
  constructor(private readonly db: Knex) {}

  async register(ref: DexPoolRef): Promise<void> {
    await this.db('tx.dex_pools').insert({ chain_type: ref.chainType, chain_id: ref.chainId, pool_address: ref.pool }).onConflict(['chain_type', 'chain_id', 'pool_address']).ignore();
  }

  async remove(ref: DexPoolRef): Promise<void> {
    await this.db('tx.dex_pools').where({ chain_type: ref.chainType, chain_id: ref.chainId, pool_address: ref.pool }).del();
  }

  async all(): Promise<DexPoolRef[]> {
    const rows = (await this.db('tx.dex_pools').select('chain_type', 'chain_id', 'pool_address')) as Array<{ chain_type: string; chain_id: number; pool_address: string }>;
    return rows.map((r) => ({ chainType: r.chain_type, chainId: Number(r.chain_id), pool: r.pool_address }));
  }
}
