import type { Knex } from '@chainpipe/db';
import type { Logger } from '@chainpipe/runtime';
import { DexPoolRepository, type DexPoolRef, type PoolTrades } from '@chainpipe/tx-store';
import type { TransactionResult } from '@chainpipe/contracts';

export interface DexPoolUseCaseDeps {
  /** tx.dex_pools: the registered pools (global, like the pools themselves). */
  db: Knex;
  /** Recent trades per registered pool (Redis), appended by tx-matcher. */
  poolTrades: Pick<PoolTrades, 'latest' | 'clear'>;
  logger: Logger;
}

/** What the pool trade routes call, with the pool already parsed into its stored form. */
export interface DexPoolUseCases {
  /** Registers the pool: trades are kept from the next matched block on. */
  register(ref: DexPoolRef): Promise<void>;
  /** Removes the pool and the trades kept of it. */
  remove(ref: DexPoolRef): Promise<void>;
  /** The latest trades of the pool, newest first. */
  latest(ref: DexPoolRef, limit: number): Promise<TransactionResult[]>;
}

export function dexPoolUseCases(deps: DexPoolUseCaseDeps): DexPoolUseCases {
  const log = deps.logger.child({ component: 'dex-pools' });
  const pools = new DexPoolRepository(deps.db);
  return {
    async register(ref) {
      await pools.register(ref);
      log.info({ msg: 'pool_registered', ...ref });
    },
    async remove(ref) {
      await pools.remove(ref);
      await deps.poolTrades.clear(ref.chainType, ref.chainId, ref.pool);
      log.info({ msg: 'pool_removed', ...ref });
    },
    latest: (ref, limit) => deps.poolTrades.latest(ref.chainType, ref.chainId, ref.pool, limit),
  };
}
